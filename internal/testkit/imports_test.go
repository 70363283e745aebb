package testkit

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testHelpers are the packages only tests may import: agentsh itself must
// not carry them (nor their -update flag).
var testHelpers = []string{"agentsh/internal/testkit", "agentsh/internal/proctest", "agentsh/internal/disktest", "agentsh/internal/targettest"}

// TestOnlyTestsImportTestHelpers: no file of the module but a _test.go
// file, or another test helper, imports a test helper.
func TestOnlyTestsImportTestHelpers(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, h := range testHelpers {
			if "agentsh/"+filepath.ToSlash(rel) == h {
				return nil
			}
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, h := range testHelpers {
				if p == h {
					t.Errorf("%s imports the test helper %s", path, h)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
