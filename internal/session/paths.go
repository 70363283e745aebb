package session

import (
	"agentsh/internal/xdg"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// maxEncodedLen keeps an encoded cwd well below the usual 255-byte NAME_MAX,
// leaving room for anything a caller might append.
const maxEncodedLen = 200

// EncodeCwd turns a working directory into a single, file-name-safe path
// component that identifies it.
//
// The scheme follows the reference design so folders stay recognisable:
//
//	$HOME                 → "-"
//	$HOME/src/app         → "-src-app"
//	/srv/x (outside HOME) → "--srv-x--"
//	/                     → "----"
//
// The path is made absolute and cleaned first (symlinks are not resolved: the
// cwd the user sees is the one they expect to find). Separators and every
// character outside [A-Za-z0-9._-] become "-", one per character, so the
// result can never contain a separator or be "." / "..". The encoding is not
// perfectly injective ("/srv/a-b" and "/srv/a/b" collide, as in the
// reference); it only has to separate the directories one user works in.
// Results longer than 200 bytes are cut and suffixed with a hash of the full
// path so they stay distinct and within NAME_MAX.
func EncodeCwd(cwd string) string {
	p := cwd
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = filepath.ToSlash(filepath.Clean(p))

	var enc string
	home := filepath.ToSlash(xdg.Home())
	// HOME="/" would put every path "under home"; treat it as no home at all.
	switch {
	case home != "" && home != "/" && p == home:
		enc = "-"
	case home != "" && home != "/" && strings.HasPrefix(p, home+"/"):
		enc = "-" + sanitizeName(strings.TrimPrefix(p, home+"/"))
	default:
		enc = "--" + sanitizeName(strings.TrimPrefix(p, "/")) + "--"
	}
	if len(enc) > maxEncodedLen {
		sum := sha256.Sum256([]byte(p))
		enc = enc[:maxEncodedLen-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return enc
}

func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// SessionsDir returns DataDir()/sessions/<EncodeCwd(cwd)>, the folder holding
// everything agentsh keeps for one working directory.
func SessionsDir(cwd string) string {
	return filepath.Join(xdg.DataDir(), "sessions", EncodeCwd(cwd))
}

// ExecArtifactsDir returns SessionsDir(cwd)/exec, the single artifact folder
// shared by all `agentsh exec` and `agentsh artifact` invocations in cwd, so
// an id printed by one invocation can be read back by the next.
func ExecArtifactsDir(cwd string) string {
	return filepath.Join(SessionsDir(cwd), "exec")
}
