package jobs

import "fmt"

// What a user attached to a job's terminal in the TUI needs: raw keys in,
// and the terminal sized to the window showing it.

// Write sends raw bytes to the job's terminal: keys the TUI has already
// encoded as a terminal would send them, so no escapes are decoded (see
// Input for the model's text). Like pty.Session.Write it never blocks and
// fails once the job has ended.
func (j *Job) Write(raw []byte) (int, error) {
	n, err := j.run.Write(raw)
	if err != nil {
		return n, fmt.Errorf("job %s: %w", j.id, err)
	}
	j.typed()
	return n, nil
}

// Resize changes the size of the job's terminal (clamped as any PTY's);
// the program gets SIGWINCH. It does nothing once the job has ended.
func (j *Job) Resize(cols, rows int) { j.run.Resize(cols, rows) }

// Size is the job's terminal size now.
func (j *Job) Size() (cols, rows int) { return j.run.Screen().Size() }
