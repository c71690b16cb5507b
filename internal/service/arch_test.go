package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// modulePath is the import path of the module's root.
const modulePath = "github.com/swmgr/swmgr"

// goPackage is what `go list -json` says of a package.
type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string // its compiled export data, which the type checker imports
	DepOnly    bool   // only a dependency of the listed packages
	Module     *struct{ Path string }
}

// listPackages runs `go list -export -deps` on patterns in the module's
// root and returns the module's own packages the patterns name, and the
// export data of every package they import (what `go build` has in its
// cache, so the source of the dependencies is never type-checked again).
func listPackages(t *testing.T, root string, patterns ...string) (own []goPackage, exports map[string]string) {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export,DepOnly,Module"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	exports = map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Module != nil && p.Module.Path == modulePath {
			own = append(own, p)
		}
	}
	return own, exports
}

// checkedPackage is a package's non-test files, parsed and type-checked.
type checkedPackage struct {
	dir   string // below the module's root, with slashes
	files []*ast.File
	info  *types.Info
}

// typeCheck parses the named files of the package path in dir and
// type-checks them with imp (exportImporter: no dependency's source is
// read).
func typeCheck(t *testing.T, fset *token.FileSet, imp types.Importer, root, dir, path string, names []string) checkedPackage {
	t.Helper()
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	p := checkedPackage{dir: filepath.ToSlash(rel), info: &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}}
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.files = append(p.files, f)
	}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(path, fset, p.files, p.info); err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	return p
}

// exportImporter imports packages from the export data files in exports.
func exportImporter(fset *token.FileSet, exports map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s: it is not a dependency of the listed packages", path)
		}
		return os.Open(file)
	})
}

// kindNameUse is a constant expression whose value is a declared kind's or
// action's name.
type kindNameUse struct {
	at       string // file:line below the module's root
	dir      string // the package's directory below the module's root
	name     string
	position string // where it stands: "comparison", "switch case", "map key", ...
}

func (u kindNameUse) String() string {
	return fmt.Sprintf("%s: %q as %s", u.at, u.name, u.position)
}

// kindNameUses finds in p every constant expression of a string type
// (a literal, a named constant, a constant expression) whose value is one
// of names, where it names a kind: any position but a field's name (see
// fieldName). An expression is taken whole: in "Us"+"er" the sum is the
// name, its parts are not.
func kindNameUses(fset *token.FileSet, root string, p checkedPackage, names map[string]bool) []kindNameUse {
	var uses []kindNameUse
	for _, f := range p.files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if e, ok := n.(ast.Expr); ok && len(stack) > 0 {
				if tv, ok := p.info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
					if name := constant.StringVal(tv.Value); names[name] && !fieldName(p.info, stack, e) {
						pos := fset.Position(e.Pos())
						rel, _ := filepath.Rel(root, pos.Filename)
						uses = append(uses, kindNameUse{at: filepath.ToSlash(rel) + ":" + strconv.Itoa(pos.Line), dir: p.dir, name: name, position: positionOf(p.info, stack, e)})
					}
					return false // a constant's parts are not used on their own
				}
			}
			stack = append(stack, n)
			return true
		})
	}
	return uses
}

// positionOf says where e, below the nodes of stack, stands.
func positionOf(info *types.Info, stack []ast.Node, e ast.Expr) string {
	switch p := stack[len(stack)-1].(type) {
	case *ast.BinaryExpr:
		if p.Op == token.EQL || p.Op == token.NEQ {
			return "comparison"
		}
		return "operand of " + p.Op.String()
	case *ast.CaseClause:
		return "switch case"
	case *ast.KeyValueExpr:
		lit, _ := stack[len(stack)-2].(*ast.CompositeLit)
		switch typeOf(info, lit).(type) {
		case *types.Map:
			if p.Key == e {
				return "map key"
			}
			return "map value"
		case *types.Struct:
			if id, ok := p.Key.(*ast.Ident); ok {
				return "struct field " + id.Name
			}
		}
		return "list element"
	case *ast.CompositeLit:
		if _, ok := typeOf(info, p).(*types.Struct); ok {
			return "struct field"
		}
		return "list element"
	case *ast.CallExpr:
		return "argument"
	case *ast.IndexExpr:
		return "index"
	case *ast.AssignStmt:
		return "assignment"
	case *ast.ValueSpec:
		if len(stack) > 1 {
			if d, ok := stack[len(stack)-2].(*ast.GenDecl); ok && d.Tok == token.CONST {
				return "constant declaration"
			}
		}
		return "assignment"
	case *ast.ReturnStmt:
		return "return value"
	}
	return fmt.Sprintf("operand of %T", stack[len(stack)-1])
}

// typeOf is the underlying type of the composite literal lit (with a
// pointer's element for &T{...} elided in a list), or nil.
func typeOf(info *types.Info, lit *ast.CompositeLit) types.Type {
	if lit == nil {
		return nil
	}
	t := info.TypeOf(lit)
	if t == nil {
		return nil
	}
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		t = ptr.Elem()
	}
	return t.Underlying()
}

// fieldName says whether e, below the nodes of stack, is a field's name in
// an object (model.Object): a key of an Object literal, an index into an
// Object, or the argument of one of Object's methods (Str, Int, List, ...).
// Port, Vrf and User are fields of other kinds too; a field's name is
// declared by the kind that has it, and reading it names no kind.
func fieldName(info *types.Info, stack []ast.Node, e ast.Expr) bool {
	switch p := stack[len(stack)-1].(type) {
	case *ast.KeyValueExpr:
		lit, _ := stack[len(stack)-2].(*ast.CompositeLit)
		return p.Key == e && lit != nil && isObject(info.TypeOf(lit))
	case *ast.IndexExpr:
		return p.Index == e && isObject(info.TypeOf(p.X))
	case *ast.CallExpr:
		if sel, ok := p.Fun.(*ast.SelectorExpr); ok {
			if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodVal {
				return isObject(s.Recv())
			}
		}
	}
	return false
}

// isObject says whether t is model.Object or a pointer to it.
func isObject(t types.Type) bool {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == modulePath+"/internal/model" && named.Obj().Name() == "Object"
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

// declaredNames is the name of every declared kind and action.
func declaredNames() map[string]bool {
	names := map[string]bool{}
	for _, k := range model.Builtin().Kinds() {
		names[k.Name] = true
	}
	return names
}

// delegates are the packages a provider's package hands the work of its
// kinds to (the daemons' configuration, the accounts' files, the archive's
// transfers): they may name the same kinds. The provider's own package is
// not listed anywhere: the binding table says it (bind.Row.Package, the
// package that declares the provider's type).
var delegates = map[string][]string{
	"internal/backend/linux":    {"internal/frr", "internal/chrony"},
	"internal/backend/useracct": {"internal/accounts"},
	"internal/lifecycle":        {"internal/archive"},
}

// takesOver says which provider's kinds another may take: service.Open
// gives the Linux daemons whichever of the simulated daemons' kinds their
// daemons run (FRR's BGP, chronyd's NTP, the host's settings and DNS), and
// the simulated daemons keep the rest. The Linux dataplane this test opens
// runs no daemon, so its table shows none of them.
var takesOver = map[string]string{"linux daemons": "simulated daemons"}

// allowedNames returns, per package directory, the kinds and actions it
// may name: those bound to the providers whose types it declares, by the
// binding tables service.Open builds on every dataplane this test can open
// (the Linux one needs root, for a network namespace), and their
// delegates'. The packages of a provider that no opened table has are in
// unchecked: what they may name is not known.
func allowedNames(t *testing.T, known map[string]bool) (allowed map[string]map[string]bool, unchecked map[string]bool) {
	t.Helper()
	tables := []*bind.Table{openSim(t).Table}
	everyDataplane := os.Geteuid() == 0
	if everyDataplane {
		svc, err := openTest(t, Linux, linuxLab(t))
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, svc.Table)
	} else {
		t.Log("not root: the Linux dataplane is not opened, and the packages of its providers are not checked")
	}
	module := modulePath + "/"
	kinds := map[string][]string{}    // by provider
	packages := map[string][]string{} // by provider
	for _, table := range tables {
		for _, r := range table.Rows() {
			kinds[r.Provider] = append(kinds[r.Provider], r.Kind)
			dir := strings.TrimPrefix(r.Package, module)
			if !slices.Contains(packages[r.Provider], dir) {
				packages[r.Provider] = append(packages[r.Provider], dir)
			}
		}
	}
	for provider, from := range takesOver {
		kinds[provider] = append(kinds[provider], kinds[from]...)
		if len(packages[provider]) == 0 {
			packages[provider] = []string{"internal/backend/linux"}
		}
	}
	allowed, unchecked = map[string]map[string]bool{}, map[string]bool{}
	for provider, dirs := range packages {
		for _, dir := range dirs {
			dirs = append(dirs, delegates[dir]...)
		}
		for _, dir := range dirs {
			if !known[dir] {
				t.Errorf("%s (a package of provider %q) is not a package of the module", dir, provider)
			}
			if allowed[dir] == nil {
				allowed[dir] = map[string]bool{}
			}
			for _, k := range kinds[provider] {
				allowed[dir][k] = true
			}
		}
	}
	if !everyDataplane {
		for _, dir := range append([]string{"internal/backend/linux"}, delegates["internal/backend/linux"]...) {
			unchecked[dir] = true
		}
	}
	return allowed, unchecked
}

// exemptions are the constant kind names the rule lets stand outside their
// providers, by file, name and position; each must still be found (an
// exemption that no longer matches fails the test, so the list only
// shrinks).
var exemptions = []struct {
	file, name, position, why string
}{
	// A revision's member User (who committed) shares the User kind's
	// name: it is a JSON member and a column heading, not a kind.
	{"internal/engine/revpublic.go", "User", "switch case", "a revision record's JSON member User, decoded by its key"},
	{"internal/openapi/openapi.go", "User", "map key", "the Revision and PendingConfirmation schemas' property User"},
	{"internal/cli/confirm.go", "User", "map key", "the pending confirmation's JSON member User"},
	{"internal/cli/confirm.go", "User", "list element", "the pending confirmation's column heading User"},
	{"internal/cli/show.go", "User", "list element", "the revisions table's column heading User"},
	{"internal/gnmi/host.go", "User", "list element", "HostCpuState's field User (/proc/stat's user column), a field of that kind, not the User kind"},
}

// exempt says whether u is one of exemptions, and marks it used.
func exempt(u kindNameUse, used []bool) bool {
	file := u.at[:strings.LastIndex(u.at, ":")]
	for i, e := range exemptions {
		if e.file == file && e.name == u.name && e.position == u.position {
			used[i] = true
			return true
		}
	}
	return false
}

// TestNoKindNameOutsideItsProvider keeps docs/design.md's rule: a declared
// kind or action is named only in package model and in the packages of the
// providers bound to it; the engine, the REST layer, the CLI and main know
// kinds by their declarations. Every non-test file of the module is
// type-checked, and every constant string expression whose value is a
// declared name counts, whatever spells it (a literal, a constant of any
// package, a sum of constants) and wherever it stands, but as a field's
// name in an object (fieldName) and the exemptions above.
func TestNoKindNameOutsideItsProvider(t *testing.T) {
	root := moduleRoot(t)
	pkgs, exports := listPackages(t, root, "./...")
	known := map[string]bool{}
	for _, p := range pkgs {
		rel, _ := filepath.Rel(root, p.Dir)
		known[filepath.ToSlash(rel)] = true
	}
	allowed, unchecked := allowedNames(t, known)
	fset := token.NewFileSet()
	imp := exportImporter(fset, exports)
	names := declaredNames()
	used := make([]bool, len(exemptions))
	var bad []string
	for _, p := range pkgs {
		if p.ImportPath == modulePath+"/internal/model" {
			continue // the declarations
		}
		if rel, _ := filepath.Rel(root, p.Dir); unchecked[filepath.ToSlash(rel)] || testHelper(filepath.ToSlash(rel)) {
			continue
		}
		c := typeCheck(t, fset, imp, root, p.Dir, p.ImportPath, p.GoFiles)
		for _, u := range kindNameUses(fset, root, c, names) {
			if !allowed[u.dir][u.name] && !exempt(u, used) {
				bad = append(bad, u.String())
			}
		}
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Errorf("%s: names a declared kind outside package model and its providers", b)
	}
	for i, e := range exemptions {
		if !used[i] {
			t.Errorf("exemption %s %q as %s (%s) matches nothing any more: remove it", e.file, e.name, e.position, e.why)
		}
	}
}

// testHelper says whether a package exists only for tests (enginetest,
// aaatest, frrtest, ...: named for it): its fixtures name the kinds the
// tests exercise, as test files do, and no production code imports it.
func testHelper(dir string) bool { return strings.HasSuffix(path.Base(dir), "test") }

func openSim(t *testing.T) *Service {
	t.Helper()
	svc, _ := openTest(t, Sim, nil)
	return svc
}

// TestKindNameProbes: the scan of TestNoKindNameOutsideItsProvider reports
// every kind name of testdata/kindprobe where its comments want one, with
// its position, and nothing else (an object's field names stand).
func TestKindNameProbes(t *testing.T) {
	root := moduleRoot(t)
	_, exports := listPackages(t, root, modulePath+"/internal/model")
	fset := token.NewFileSet()
	dir := filepath.Join(root, "internal", "service", "testdata", "kindprobe")
	p := typeCheck(t, fset, exportImporter(fset, exports), root, dir, "kindprobe", []string{"probe.go"})
	var want []string
	for _, f := range p.files {
		for _, g := range f.Comments {
			for _, c := range g.List {
				_, wanted, ok := strings.Cut(c.Text, "want: ")
				if !ok {
					continue
				}
				at := fset.Position(c.Pos())
				rel, _ := filepath.Rel(root, at.Filename)
				for _, w := range strings.Split(wanted, "; ") {
					want = append(want, filepath.ToSlash(rel)+":"+strconv.Itoa(at.Line)+": "+w)
				}
			}
		}
	}
	var got []string
	for _, u := range kindNameUses(fset, root, p, declaredNames()) {
		got = append(got, u.String())
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 5 {
		t.Fatalf("the probe wants %d reports; it has at least five", len(want))
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("not reported: %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("reported, not wanted: %s", g)
		}
	}
	t.Logf("reported:\n%s", strings.Join(got, "\n"))
}

// frontDoors are the packages that serve the switch to clients.
var frontDoors = []string{"internal/api", "internal/gnmi"}

// core are the packages every front door reads and writes through (the
// engine and its parts) and the root; they bind rows of their own (the
// history's Rollback, the config log) without being a provider a front door
// must not import.
func core(dir string) bool {
	return dir == "internal/service" || dir == "internal/engine" || dir == "internal/engine/history"
}

// importsApart lists the imports that break the layering of the
// switchboard: a provider that imports a front door, or a front door that
// imports a provider. deps holds each package's transitive imports.
func importsApart(deps map[string][]string, providers, doors []string) []string {
	var bad []string
	for _, p := range providers {
		for _, d := range doors {
			if slices.Contains(deps[p], d) {
				bad = append(bad, fmt.Sprintf("provider %s imports front door %s", p, d))
			}
			if slices.Contains(deps[d], p) {
				bad = append(bad, fmt.Sprintf("front door %s imports provider %s", d, p))
			}
		}
	}
	return bad
}

// TestFrontDoorsAndProvidersApart: no provider (a package that declares a
// provider type of the binding table) imports a front door, and no front
// door imports a provider, directly or not; they meet in the table
// (internal/bind). The planted violations are cases the check must find.
func TestFrontDoorsAndProvidersApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps map[string][]string
		want int
	}{
		{"apart", map[string][]string{"internal/lifecycle": {"internal/bind"}, "internal/api": {"internal/bind"}}, 0},
		{"a provider imports REST", map[string][]string{"internal/lifecycle": {"internal/bind", "internal/api"}}, 1},
		{"a provider imports gNMI through another package", map[string][]string{"internal/aaa": {"internal/obs", "internal/gnmi"}}, 1},
		{"REST imports a provider", map[string][]string{"internal/api": {"internal/engine/users"}}, 1},
	} {
		if got := importsApart(tc.deps, []string{"internal/lifecycle", "internal/aaa", "internal/engine/users"}, frontDoors); len(got) != tc.want {
			t.Errorf("%s: %v, want %d", tc.name, got, tc.want)
		}
	}

	svc := openSim(t)
	var providers []string
	for _, r := range svc.Table.Rows() {
		dir := strings.TrimPrefix(r.Package, modulePath+"/")
		if !core(dir) && !slices.Contains(providers, dir) {
			providers = append(providers, dir)
		}
	}
	if !slices.Contains(providers, "internal/backend/linux") {
		providers = append(providers, "internal/backend/linux") // not bound on the simulated switch
	}
	deps := map[string][]string{}
	for _, dir := range append(slices.Clone(providers), frontDoors...) {
		out, err := exec.Command("go", "list", "-deps", modulePath+"/"+dir).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", dir, err)
		}
		for _, p := range strings.Fields(string(out)) {
			if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok && rest != dir {
				deps[dir] = append(deps[dir], rest)
			}
		}
	}
	for _, bad := range importsApart(deps, providers, frontDoors) {
		t.Error(bad)
	}
	t.Logf("providers: %v", providers)
}

// TestNoTestHelperInTheBinary: the packages the kind-name rule leaves to the
// tests (testHelper) are not part of swmgr itself.
func TestNoTestHelperInTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", modulePath+"/cmd/swmgr").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok && testHelper(rest) {
			t.Errorf("swmgr imports the test helper %s", rest)
		}
	}
}
