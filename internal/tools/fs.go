package tools

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FS is the file system the file tools work through: the host's (package
// os) when the session is not sandboxed, else the sandbox's view, where a
// confined helper opens every path and the kernel decides
// (internal/confinedfs). Only what the tools use is here.
type FS interface {
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	MkdirAll(name string, perm fs.FileMode) error
	Rename(oldpath, newpath string) error
	Remove(name string) error
	CreateTemp(dir, pattern string) (*os.File, error)
	EvalSymlinks(path string) (string, error)
}

// HostFS is this process's own file system, unconfined.
var HostFS FS = hostFS{}

type hostFS struct{}

func (hostFS) Open(name string) (*os.File, error) { return os.Open(name) }
func (hostFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
func (hostFS) Stat(name string) (fs.FileInfo, error)            { return os.Stat(name) }
func (hostFS) Lstat(name string) (fs.FileInfo, error)           { return os.Lstat(name) }
func (hostFS) ReadDir(name string) ([]fs.DirEntry, error)       { return os.ReadDir(name) }
func (hostFS) MkdirAll(name string, perm fs.FileMode) error     { return os.MkdirAll(name, perm) }
func (hostFS) Rename(oldpath, newpath string) error             { return os.Rename(oldpath, newpath) }
func (hostFS) Remove(name string) error                         { return os.Remove(name) }
func (hostFS) CreateTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }
func (hostFS) EvalSymlinks(path string) (string, error)         { return filepath.EvalSymlinks(path) }

// isHost reports whether fsys is the unconfined host file system.
func isHost(fsys FS) bool {
	_, ok := fsys.(hostFS)
	return ok
}

type fsKey struct{}

// WithFS makes the file tools called with ctx work through fsys instead
// of their Env's FS: the session's sandbox gate runs a call in the
// sandbox's view, and again on the host once the user approved.
func WithFS(ctx context.Context, fsys FS) context.Context {
	return context.WithValue(ctx, fsKey{}, fsys)
}

// fs is the file system of one call: WithFS's, else Env.FS's, else the host's.
func (e Env) fs(ctx context.Context) FS {
	if f, ok := ctx.Value(fsKey{}).(FS); ok && f != nil {
		return f
	}
	if e.FS != nil {
		if f := e.FS(); f != nil {
			return f
		}
	}
	return HostFS
}

// readFileFS is os.ReadFile through fsys.
func readFileFS(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return data, nil
			}
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
