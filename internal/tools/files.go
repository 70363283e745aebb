package tools

import (
	"context"
	"fmt"
)

// ListFiles returns the files below root (slash-separated, relative to it)
// the way find sees them: hidden entries, .git and whatever the ignore files
// exclude are left out, folders are not listed. It stops after limit files
// and then reports truncated; the @ completion of the TUI uses it so a huge
// tree costs a bounded walk. fsys is the session's file system (nil: the
// host's), so a folder the sandbox denies is not listed.
func ListFiles(ctx context.Context, fsys FS, root string, limit int) (files []string, truncated bool, err error) {
	if fsys == nil {
		fsys = HostFS
	}
	err = walkTree(ctx, fsys, root, walkOptions{}, func(e walkEntry) error {
		if e.dir {
			return nil
		}
		if len(files) >= limit {
			truncated = true
			return errStopWalk
		}
		files = append(files, e.rel)
		return nil
	})
	if err != nil {
		return files, truncated, fmt.Errorf("list files of %s: %w", root, err)
	}
	return files, truncated, nil
}
