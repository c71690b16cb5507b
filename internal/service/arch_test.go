package service

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend/linux"
	"github.com/swmgr/swmgr/internal/model"
)

// providerPackages are the packages that implement each provider of the
// binding table (the directories below the module's root).
var providerPackages = map[string][]string{
	"simulated dataplane": {"internal/backend/sim"},
	"simulated daemons":   {"internal/backend/sim"},
	"linux dataplane":     {"internal/backend/linux"},
	"linux daemons":       {"internal/backend/linux", "internal/frr", "internal/chrony"},
	"accounts":            {"internal/backend/useracct", "internal/accounts", "internal/engine/users"},
	"archive scheduler":   {"internal/lifecycle", "internal/archive"},
	"lifecycle":           {"internal/lifecycle"},
	"history":             {"internal/engine/history"},
	"config log":          {"internal/configlog"},
	"service states":      {"internal/service"},
	"central AAA":         {"internal/aaa"},
}

// literalNames finds, in every non-test Go file under root (but the
// packages in skip), the string literals that are the name of a declared
// kind or action: file:line -> name.
func literalNames(t *testing.T, root string, names map[string]bool, skip func(dir string) bool) map[string]string {
	t.Helper()
	found := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || skip(filepath.Dir(rel)) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] && namesAKind(stack, lit) {
					found[rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)] = s
				}
			}
			stack = append(stack, n)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// fieldAccessors are the methods that take a field's name: a literal given
// to them is a field (Port, Vrf and User are fields too), not a kind.
var fieldAccessors = map[string]bool{"Str": true, "Int": true, "Bool": true, "Field": true, "Has": true, "Float": true, "Strs": true, "Objects": true}

// namesAKind says whether the string literal lit, below the nodes of
// stack, stands where a kind or an action is named: compared with a name,
// a case of a switch on one, a constant or variable, a value assigned or
// given to a call (a lookup, a snapshot's kinds, an error's object), a
// struct field Kind or Object. A field's name (a key of an object literal,
// an argument of Str and its like) and a column heading are not.
func namesAKind(stack []ast.Node, lit *ast.BasicLit) bool {
	if len(stack) == 0 {
		return false
	}
	switch p := stack[len(stack)-1].(type) {
	case *ast.BinaryExpr:
		return p.Op == token.EQL || p.Op == token.NEQ
	case *ast.CaseClause:
		// A case of a switch on a kind's name (not on a JSON key).
		if len(stack) >= 3 {
			if sw, ok := stack[len(stack)-3].(*ast.SwitchStmt); ok && sw.Tag != nil {
				return kindish(sw.Tag)
			}
		}
		return false
	case *ast.ValueSpec, *ast.AssignStmt, *ast.ReturnStmt:
		return true
	case *ast.KeyValueExpr:
		if id, ok := p.Key.(*ast.Ident); ok && p.Value == lit {
			return id.Name == "Kind" || id.Name == "Object" || id.Name == "Name"
		}
		return false
	case *ast.CallExpr:
		if sel, ok := p.Fun.(*ast.SelectorExpr); ok && fieldAccessors[sel.Sel.Name] {
			return false
		}
		return true
	case *ast.CompositeLit:
		// The elements of a list of kinds given to a call (Snapshot's).
		if len(stack) >= 2 {
			if call, ok := stack[len(stack)-2].(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					return sel.Sel.Name == "Snapshot"
				}
			}
		}
	}
	return false
}

// kindish says whether e reads as a kind or its name: x.Name, or a name
// that says kind.
func kindish(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "Name" || strings.Contains(strings.ToLower(x.Sel.Name), "kind")
	case *ast.Ident:
		return strings.Contains(strings.ToLower(x.Name), "kind")
	}
	return false
}

// moduleRoot is the directory of go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = up
	}
}

// allowedNames is, per package directory, the kinds and actions it may
// name: those of the providers it implements, by the binding table of the
// simulated switch and the Linux dataplane's kinds.
func allowedNames(t *testing.T) map[string]map[string]bool {
	t.Helper()
	svc := openSim(t)
	allowed := map[string]map[string]bool{}
	allow := func(provider, kind string) {
		pkgs, ok := providerPackages[provider]
		if !ok {
			t.Fatalf("provider %q is not in providerPackages: say which packages implement it", provider)
		}
		for _, p := range pkgs {
			if allowed[p] == nil {
				allowed[p] = map[string]bool{}
			}
			allowed[p][kind] = true
		}
	}
	for provider, kinds := range svc.Table.Providers() {
		for _, k := range kinds {
			allow(provider, k)
			if provider == "simulated daemons" {
				allow("linux daemons", k) // the same kinds, run by FRR, chronyd and the host
			}
		}
	}
	for k := range linux.DataplaneKinds() {
		allow("linux dataplane", k)
	}
	return allowed
}

// TestNoKindNameOutsideItsProvider keeps docs/design.md's rule: a declared
// kind or action is named only in package model and in the packages of the
// providers bound to it; the engine, the REST layer, the CLI and main know
// kinds by their declarations.
func TestNoKindNameOutsideItsProvider(t *testing.T) {
	names := map[string]bool{}
	for _, k := range model.Builtin().Kinds() {
		names[k.Name] = true
	}
	allowed := allowedNames(t)
	root := moduleRoot(t)
	found := literalNames(t, root, names, func(dir string) bool {
		return dir == "internal/model" || strings.HasPrefix(dir, "bench") || strings.HasPrefix(dir, "client")
	})
	var bad []string
	for at, name := range found {
		dir := filepath.Dir(at[:strings.LastIndex(at, ":")])
		if !allowed[dir][name] {
			bad = append(bad, at+": "+strconv.Quote(name))
		}
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Errorf("%s names a declared kind outside package model and its providers", b)
	}
}

func openSim(t *testing.T) *Service {
	t.Helper()
	svc, _ := openTest(t, Sim, nil)
	return svc
}
