package apierr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestCodesListsEveryCode keeps Codes (and so the OpenAPI document's enum of
// error codes) in step with the Code constants declared in this package.
func TestCodesListsEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "apierr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range Codes() {
		if listed[c] {
			t.Errorf("Codes lists %q twice", c)
		}
		listed[c] = true
	}
	declared := 0
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		code, _ := strconv.Unquote(lit.Value)
		declared++
		if !listed[code] {
			t.Errorf("%s = %q is missing from Codes", vs.Names[0].Name, code)
		}
		return true
	})
	if declared != len(listed) {
		t.Errorf("%d codes declared, Codes lists %d", declared, len(listed))
	}
}
