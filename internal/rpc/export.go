package rpc

import (
	"agentsh/internal/export"
)

// CmdExportHTML writes the session's transcript as one HTML file.
const CmdExportHTML = "export_html"

func init() {
	register(fileCmd(CmdExportHTML, (*server).exportHTML))
}

// exportParams is export_html {outputPath?}.
type exportParams struct {
	OutputPath *string `json:"outputPath"`
}

// ExportData is export_html's data.
type ExportData struct {
	// Path is the file written, absolute.
	Path string `json:"path"`
}

// exportHTML answers export_html {outputPath?}: the file goes to
// outputPath (relative to the session's directory) or, without one, to
// agentsh-session-<session file name>.html there, as the reference names
// it. The transcript holds what the session has recorded so far, so an
// export during a turn has the turn up to its last finished message. The
// export runs beside the command loop (a long session takes a while to
// render and write); the commands after it wait for it, but for get_state
// and the aborts sent before any other (Serve).
func (s *server) exportHTML(c *command, p *exportParams) <-chan struct{} {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	out := ""
	if p.OutputPath != nil {
		out = *p.OutputPath
	}
	return s.fileWork(func() {
		path, err := export.WriteSession(sess, out)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.ok(c, ExportData{Path: path})
	})
}
