package engine_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPackagesDependOneWay keeps the split of the engine (docs/design.md,
// "The commit path"): the change feed is a leaf, the core knows none of
// its parts, and the parts (history, candidates, users) sit on the core
// without importing each other. enginetest, a test fixture, may import
// only the core.
func TestPackagesDependOneWay(t *testing.T) {
	const module = "github.com/swmgr/swmgr/internal/engine"
	allowed := map[string][]string{ // directory -> the engine packages it may import
		".":          {"feed"},
		"feed":       nil,
		"history":    {"."},
		"candidates": {"."},
		"users":      {"."},
		"enginetest": {"."},
	}
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, known := allowed[d.Name()]; d.IsDir() && !known {
			t.Errorf("package engine/%s is not in this test's table: say what it may import", d.Name())
		}
	}
	for dir, may := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path != module && !strings.HasPrefix(path, module+"/") {
					continue
				}
				pkg := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
				if pkg == "" {
					pkg = "."
				}
				if !slices.Contains(may, pkg) {
					t.Errorf("%s imports %s; engine/%s may import only %v", file, path, dir, may)
				}
			}
		}
	}
}
