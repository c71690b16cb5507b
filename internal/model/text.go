package model

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/swmgr/swmgr/internal/apierr"
)

// Text is the class of text a string field may hold. Every string field,
// each element of a string list and every string sub-field of a record has
// one: TextLine unless it declares another. Parse and Validate apply it to
// every value given, before the field's Enum and Format, so a field added
// to the model is covered without saying so.
type Text int

const (
	// TextLine is one line of printable text (free text: a Description, a
	// Timezone, a VRF's Name). It refuses every rune of Unicode category C
	// (the controls C0, DEL and C1 such as ESC and U+0085 NEXT LINE; format
	// characters such as U+200B and the bidi overrides U+202A..U+202E;
	// private use, surrogates, unassigned code points) and the line and
	// paragraph separators U+2028 and U+2029: they are invisible, drive
	// terminals (ESC), end a line for some readers and not others (a
	// replayed `show run`, `ip -o link`, a daemon's configuration), and
	// end a string in C (NUL).
	TextLine Text = iota
	// TextName is a name that another program reads as one word (an FRR
	// route-map or peer-group name, an interface name): ASCII letters,
	// digits and _ . : / @ + - only.
	TextName
	// TextSecret is a password or passphrase: what TextLine allows (the OS
	// tools and daemons read a secret as one line of a file or a command),
	// and a refusal never says which character, or where: the message is
	// logged and shown. Every sealed or transient field is TextSecret
	// (NewRegistry makes it so when it declares no class), and only those.
	TextSecret
	// TextLines is several lines of printable text: TextLine's characters
	// and newlines between the lines. Only a field the switch reports may
	// have it (a file's content in a state, such as the resolver
	// configuration in effect): no client writes one. The CLI shows each
	// line of it on a line of its own.
	TextLines
)

// Rule says in words what a value of class t may hold (the generated
// reference shows it).
func (t Text) Rule() string {
	switch t {
	case TextName:
		return "a name: ASCII letters, digits and _ . : / @ + - only"
	case TextLines:
		return "lines of printable characters, newlines between them and nothing else a terminal acts on"
	}
	return "one line of printable characters: no control characters (newline, tab, NUL, ESC, U+0085, ...), format characters (U+200B, U+202E, ...) or line separators"
}

// IsLineBreaking reports the runes TextLine refuses: Unicode category C
// (IsControl) and the line and paragraph separators.
func IsLineBreaking(r rune) bool {
	return r == '\u2028' || r == '\u2029' || IsControl(r)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '/' || c == '@' || c == '+' || c == '-'
}

// badRune returns the position (1-based, in characters) and the first rune
// of s that class t refuses; n is 0 if there is none.
func (t Text) badRune(s string) (n int, bad rune) {
	// The common value is short printable ASCII: one pass over its bytes.
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			break
		}
		if t == TextName && !isNameByte(c) || c < 0x20 && !(c == '\n' && t == TextLines) || c == 0x7f {
			return i + 1, rune(c)
		}
		i++
	}
	if i == len(s) {
		return 0, 0
	}
	pos := i
	for _, r := range s[i:] {
		pos++
		if t == TextName && (r >= utf8.RuneSelf || !isNameByte(byte(r))) || IsLineBreaking(r) && !(r == '\n' && t == TextLines) {
			return pos, r
		}
	}
	return 0, 0
}

// describeRune names a refused rune without writing it raw: a control
// character written as it is would reach the terminal that reads the
// message.
func describeRune(r rune) string {
	code := fmt.Sprintf("U+%04X", r)
	switch {
	case r == '\u2028' || r == '\u2029':
		return code + ", a line separator"
	case unicode.Is(unicode.Cc, r):
		return code + ", a control character"
	case unicode.Is(unicode.Cf, r):
		return code + ", a format character"
	case unicode.Is(unicode.Co, r):
		return code + ", a private-use character"
	case unicode.Is(unicode.Cs, r) || r == utf8.RuneError:
		return code + ", not a character"
	case IsControl(r):
		return code + ", an unassigned code point"
	}
	return fmt.Sprintf("%q (%s)", string(r), code)
}

// checkText refuses a value of f that its text class does not allow; elem
// names the element of a list ("" for a plain field).
func (f *Field) checkText(kind, s, elem string) error {
	n, r := f.Text.badRune(s)
	if n == 0 {
		return nil
	}
	what := f.Name
	if elem != "" {
		what += " " + elem
	}
	if f.Text == TextSecret {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: a character is not allowed; a secret holds %s", what, f.Text.Rule())
	}
	return apierr.BadRequest(apierr.CodeInvalidValue, kind, f.Name, "%s: character %d is %s; %s holds %s", what, n, describeRune(r), f.Name, f.Text.Rule())
}

// CheckLine applies TextLine to a string that is no kind's field (a
// commit's Comment): the same rule, the same refusal.
func CheckLine(kind, field, s string) error {
	return (&Field{Name: field, Type: String}).checkText(kind, s, "")
}

// MaxComment is the longest comment, in bytes, a commit or a candidate
// takes: it is kept with every revision and shown in history, the change
// feed and the CLI.
const MaxComment = 1024

// CheckComment is the one rule of a comment, whatever the front door: a
// commit's or candidate's Comment over REST, gNMI's commit id (which
// becomes the commit's comment): one line of TextLine of at most max
// bytes (MaxComment, less what the front door adds around it). field
// names the value as the request spelled it.
func CheckComment(kind, field, s string, max int) error {
	if len(s) > max {
		return apierr.BadRequest(apierr.CodeInvalidValue, kind, field, "%s: %d bytes is too long; at most %d", field, len(s), max)
	}
	return CheckLine(kind, field, s)
}

// CheckText applies the field's text class to a value of its type: a
// string, each element of a string list, each string sub-field of a
// record or of each record of a list. Other values pass.
func (f *Field) CheckText(kind string, v any) error {
	switch x := v.(type) {
	case string:
		return f.checkText(kind, x, "")
	case []string:
		for i, s := range x {
			if err := f.checkText(kind, s, fmt.Sprintf("element %d", i+1)); err != nil {
				return err
			}
		}
	case Object:
		for _, s := range f.Sub {
			if err := s.CheckText(kind, x[s.Name]); err != nil {
				prefixRecordError(err, f.Name)
				return err
			}
		}
	case []Object:
		for _, o := range x {
			if err := f.CheckText(kind, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefixRecordError makes a sub-field's refusal name the record field.
func prefixRecordError(err error, field string) {
	if ae, ok := err.(*apierr.Error); ok {
		ae.Message = field + "." + ae.Message
		ae.Field = field
	}
}

// checkTextDecl gives a secret string field that declares no class
// TextSecret, and refuses a declaration whose text class does not fit: a
// class on a field that holds no text, a secret of another class, a
// TextSecret that is no secret, TextLines on a field a client may set
// (stateOnly: the field is one of the kind's StateOnly).
func (f *Field) checkTextDecl(kind string, stateOnly bool) error {
	text := f.Type == String || f.Type == StringList
	if text && f.Secret != Public && f.Text == TextLine {
		f.Text = TextSecret
	}
	switch {
	case !text && f.Text != TextLine:
		return errorf("%s.%s: only a string field has a text class", kind, f.Name)
	case text && (f.Secret != Public) != (f.Text == TextSecret):
		return errorf("%s.%s: a sealed or transient field, and only such a field, is TextSecret", kind, f.Name)
	case f.Text == TextLines && !stateOnly && !f.ReadOnly:
		return errorf("%s.%s: only a field the switch reports (StateOnly or ReadOnly) may be TextLines", kind, f.Name)
	case f.Text > TextLines:
		return errorf("%s.%s: unknown text class %d", kind, f.Name, f.Text)
	}
	return nil
}

// Truncate cuts s to at most n bytes (n > 3), at a character's start,
// marking a cut with "...": for text bounded by a protocol's field (an
// accounting record's attribute) rather than refused.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
