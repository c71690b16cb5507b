package accounts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The four account files, as /etc has them.
const (
	passwdFile  = "passwd"
	shadowFile  = "shadow"
	groupFile   = "group"
	gshadowFile = "gshadow"
)

var etcFiles = []string{passwdFile, shadowFile, groupFile, gshadowFile}

// table is one colon-separated account file. Lines that are not entries
// (comments, blank lines) are kept as they are, with a single field.
type table [][]string

func parseTable(data []byte) table {
	var t table
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		t = append(t, strings.Split(line, ":"))
	}
	return t
}

func (t table) bytes() []byte {
	var b bytes.Buffer
	for _, f := range t {
		b.WriteString(strings.Join(f, ":"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// find returns the index of the entry whose first field is name, or -1.
func (t table) find(name string) int {
	for i, f := range t {
		if len(f) > 1 && f[0] == name {
			return i
		}
	}
	return -1
}

func (t table) clone() table {
	out := make(table, len(t))
	for i, f := range t {
		out[i] = slices.Clone(f)
	}
	return out
}

func (t table) without(i int) table {
	return append(t[:i:i], t[i+1:]...)
}

// field returns field n of entry i, or "".
func (t table) field(i, n int) string {
	if i < 0 || n >= len(t[i]) {
		return ""
	}
	return t[i][n]
}

// etc is the four account files of one system.
type etc struct {
	passwd, shadow, group, gshadow table
}

// readEtc reads the account files in dir. A missing gshadow is empty.
func readEtc(dir string) (*etc, error) {
	e := &etc{}
	for _, name := range etcFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if name == gshadowFile && os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("read account file: %w", err)
		}
		*e.table(name) = parseTable(data)
	}
	return e, nil
}

func (e *etc) table(name string) *table {
	switch name {
	case passwdFile:
		return &e.passwd
	case shadowFile:
		return &e.shadow
	case groupFile:
		return &e.group
	}
	return &e.gshadow
}

func (e *etc) clone() *etc {
	return &etc{passwd: e.passwd.clone(), shadow: e.shadow.clone(), group: e.group.clone(), gshadow: e.gshadow.clone()}
}

// lookup returns the account name.
func (e *etc) lookup(name string) (Account, bool) {
	i := e.passwd.find(name)
	if i < 0 || len(e.passwd[i]) < 7 {
		return Account{}, false
	}
	f := e.passwd[i]
	a := Account{Name: name, Home: f[5], Shell: f[6]}
	a.UID, _ = strconv.Atoi(f[2])
	a.GID, _ = strconv.Atoi(f[3])
	a.Group = e.groupName(a.GID)
	return a, true
}

func (e *etc) groupName(gid int) string {
	s := strconv.Itoa(gid)
	for _, f := range e.group {
		if len(f) >= 3 && f[2] == s {
			return f[0]
		}
	}
	return s
}

// gid returns the id of group name.
func (e *etc) gid(name string) (int, bool) {
	i := e.group.find(name)
	if i < 0 || len(e.group[i]) < 3 {
		return 0, false
	}
	gid, err := strconv.Atoi(e.group[i][2])
	return gid, err == nil
}

// members lists the accounts whose primary group is group.
func (e *etc) members(group string) []string {
	gid, ok := e.gid(group)
	if !ok {
		return nil
	}
	s := strconv.Itoa(gid)
	var out []string
	for _, f := range e.passwd {
		if len(f) >= 4 && f[3] == s {
			out = append(out, f[0])
		}
	}
	return out
}

// groupEmpty reports whether no account has gid as its primary group and
// group has no members.
func (e *etc) groupEmpty(group string, gid int) bool {
	s := strconv.Itoa(gid)
	for _, f := range e.passwd {
		if len(f) >= 4 && f[3] == s {
			return false
		}
	}
	i := e.group.find(group)
	return i < 0 || e.group.field(i, 3) == ""
}

// supplementary lists the groups that name is a listed member of.
func (e *etc) supplementary(name string) []string {
	var out []string
	for _, f := range e.group {
		if len(f) >= 4 && slices.Contains(strings.Split(f[3], ","), name) {
			out = append(out, f[0])
		}
	}
	return out
}

// shadowHash returns the password field of name's shadow entry and whether
// the account is usable (not expired) today.
func (e *etc) shadowHash(name string, now time.Time) (string, bool) {
	i := e.shadow.find(name)
	if i < 0 {
		return "", false
	}
	if exp := e.shadow.field(i, 7); exp != "" {
		if days, err := strconv.ParseInt(exp, 10, 64); err == nil && now.Unix()/86400 >= days {
			return "", false
		}
	}
	return e.shadow.field(i, 1), true
}

// nextID returns the lowest free id >= 1000 in column col of t.
func nextID(t table, col int) int {
	used := map[int]bool{}
	for _, f := range t {
		if len(f) > col {
			if n, err := strconv.Atoi(f[col]); err == nil {
				used[n] = true
			}
		}
	}
	id := 1000
	for used[id] {
		id++
	}
	return id
}

// daysNow is the shadow "last change" field for now.
func daysNow(now time.Time) string { return strconv.FormatInt(now.Unix()/86400, 10) }

// removeMember drops name from every group's (and gshadow's) member lists.
func removeMember(t table, col int, name string) {
	for _, f := range t {
		if len(f) > col && f[col] != "" {
			ms := strings.Split(f[col], ",")
			if i := slices.Index(ms, name); i >= 0 {
				f[col] = strings.Join(slices.Delete(ms, i, i+1), ",")
			}
		}
	}
}

// addMember adds name to the member list of group in t.
func addMember(t table, col int, group, name string) {
	i := t.find(group)
	if i < 0 {
		return
	}
	for len(t[i]) <= col {
		t[i] = append(t[i], "")
	}
	if t[i][col] == "" {
		t[i][col] = name
	} else if !slices.Contains(strings.Split(t[i][col], ","), name) {
		t[i][col] += "," + name
	}
}
