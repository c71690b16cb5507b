// Free text: control characters are refused in every string field of every
// kind (the model's text classes), and nothing an operator or a local
// account plants reaches an admin's terminal or a replayed `show run`.

package test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// controlRunes are the characters every string field refuses, with the
// code the refusal names: C0 (newline, carriage return, ESC, NUL), DEL and
// C1 (NEXT LINE, the 8-bit CSI).
var controlRunes = []struct{ r, code string }{
	{"\n", "U+000A"}, {"\r", "U+000D"}, {"\x1b", "U+001B"}, {"\x00", "U+0000"},
	{"\x7f", "U+007F"}, {"\u0085", "U+0085"}, {"\u009b", "U+009B"},
}

// TestControlCharactersRefusedOnEveryField writes a value holding each
// control character into every string field (list elements and record
// sub-fields included) of every config kind and action that
// model.Builtin() declares, through the REST API of a running swmgr: each
// write is a 400 invalid_value naming the character (a secret's refusal
// names neither it nor the value), directly and staged into a candidate,
// and the store is unchanged.
func TestControlCharactersRefusedOnEveryField(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	cand := s.expect(t, 201, "POST", "/candidates", `{}`).str("CandidateId")
	s.stop(t)
	before := dump(t, dir)
	s = startServer(t, dir)

	type target struct {
		kind       *model.Kind
		field, sub *model.Field
	}
	var targets []target
	for _, k := range model.Builtin().Kinds() {
		if k.Class == model.State {
			continue // nothing is written
		}
		for _, f := range k.Fields {
			if f.Type == model.String || f.Type == model.StringList {
				targets = append(targets, target{k, f, nil})
			}
			for _, sub := range f.Sub {
				if sub.Type == model.String || sub.Type == model.StringList {
					targets = append(targets, target{k, f, sub})
				}
			}
		}
	}
	if len(targets) < 50 {
		t.Fatalf("only %d string fields", len(targets))
	}
	const marker = "Zq9"
	n := 0
	for _, tg := range targets {
		for _, c := range controlRunes {
			value := marker + c.r + "x"
			leaf := tg.field
			if tg.sub != nil {
				leaf = tg.sub
			}
			var v any = value
			if leaf.Type == model.StringList {
				v = []string{value}
			}
			if tg.sub != nil {
				rec := map[string]any{tg.sub.Name: v}
				v = rec
				if tg.field.Type == model.RecordList {
					v = []any{rec}
				}
			}
			body := map[string]any{tg.field.Name: v}
			k := tg.kind
			var writes [][2]string
			switch {
			case k.Class == model.Action:
				writes = append(writes, [2]string{"POST", "/action/" + k.Name})
			case k.Creatable():
				writes = append(writes, [2]string{"POST", "/config/" + k.Name}, [2]string{"POST", "/candidates/" + cand + "/config/" + k.Name})
			default: // a singleton or a discovered kind: changed in place
				for _, key := range k.Keys() {
					if _, given := body[key.Name]; !given && k.Discovered {
						body[key.Name] = "fpPort1"
					}
				}
				writes = append(writes, [2]string{"PATCH", "/config/" + k.Name})
			}
			raw, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range writes {
				n++
				r := s.do(t, w[0], w[1], string(raw))
				what := k.Name + "." + tg.field.Name
				if tg.sub != nil {
					what += "." + tg.sub.Name
				}
				apiErr, _ := r.body["Error"].(map[string]any)
				msg, _ := apiErr["Message"].(string)
				if r.code != 400 || apiErr["Code"] != "invalid_value" {
					t.Errorf("%s %s %s with %s: %s", w[0], w[1], what, c.code, r)
					continue
				}
				if leaf.Secret != model.Public {
					if strings.Contains(msg, marker) || strings.Contains(msg, "is "+c.code) {
						t.Errorf("%s with %s: the refusal of a secret tells of it: %s", what, c.code, msg)
					}
				} else if !strings.Contains(msg, c.code) || !strings.Contains(msg, leaf.Name) {
					t.Errorf("%s with %s: the message names neither the field nor the character: %s", what, c.code, msg)
				}
				if strings.ContainsAny(strings.TrimSuffix(string(r.raw), "\n"), "\n\r\x1b\x00\x7f\u0085\u009b") {
					t.Errorf("%s with %s: the reply holds the raw character: %q", what, c.code, r.raw)
				}
			}
		}
	}
	// A commit's Comment is free text too (history, the feed, the CLI).
	for _, w := range [][3]string{
		{"POST", "/candidates", `{"Comment":"a\u001b[2Jb"}`},
		{"POST", "/candidates/" + cand + "/commit", `{"Comment":"a\nb"}`},
	} {
		if r := s.do(t, w[0], w[1], w[2]); r.code != 400 || !strings.Contains(string(r.raw), "a control character") {
			t.Errorf("%s %s %s: %s", w[0], w[1], w[2], r)
		}
	}
	t.Logf("%d fields, %d refused writes", len(targets), n)
	s.stop(t)
	if after := dump(t, dir); !bytes.Equal(before, after) {
		t.Fatalf("refused writes changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestShowRunReplayCannotCreateUser: an operator plants commands in a Port
// Description (newlines, then a `user` block with Group admin); an admin
// replays `show run` as the docs say. The plant is refused at 400, and the
// replay creates no User.
func TestShowRunReplayCannotCreateUser(t *testing.T) {
	dir := t.TempDir()
	httpsAddr := freeAddr(t)
	s := startServer(t, dir, "--https", httpsAddr)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"op1-password-1"}`)
	hc := httpsClient(t, dir, "")
	secure := "https://" + httpsAddr + "/public/v1"
	for _, planted := range []string{
		"x\n!\nuser mallory\n  Group admin\n  Password mallory-pass-1\n!",
		"x\r!\ruser mallory\r  Group admin\r  Password mallory-pass-1\r!",
		"x\u0085!\u0085user mallory\u0085  Group admin\u0085  Password mallory-pass-1",
		"x\u2028!\u2028user mallory\u2028  Group admin\u2028  Password mallory-pass-1",
	} {
		body := jsonOf(map[string]any{"IntfRef": "fpPort1", "Description": planted})
		if code, resp := send(t, hc, "PATCH", secure+"/config/Port", "op1", "op1-password-1", body); code != 400 || !strings.Contains(resp, "invalid_value") {
			t.Errorf("the operator's Description %q: %d %s", planted, code, resp)
		}
	}
	// What an operator may write: quotes, backslashes, bars, semicolons.
	tricky := `to "spine" \ 1 | include x; ?`
	if code, resp := send(t, hc, "PATCH", secure+"/config/Port", "op1", "op1-password-1", jsonOf(map[string]any{"IntfRef": "fpPort1", "Description": tricky})); code != 200 {
		t.Fatalf("Description %q: %d %s", tricky, code, resp)
	}

	run, code := runCLI(t, s, "enable\nshow run\n")
	if code != 0 {
		t.Fatalf("show run: %d\n%s", code, run)
	}
	var replay strings.Builder
	replay.WriteString("enable\nconfig\n")
	for _, l := range strings.Split(run, "\n") {
		// A secret show run does not show (the admin's password) is a
		// line the replay would refuse: deleted, as an operator would.
		if !strings.HasPrefix(l, "switch") && !strings.Contains(l, "<secret-not-shown>") {
			replay.WriteString(l + "\n")
		}
	}
	replay.WriteString("apply\n")
	out, code := runCLI(t, s, replay.String())
	if code != 0 {
		t.Errorf("the replay of show run failed (%d):\n%s\nshow run was:\n%s", code, out, run)
	}
	s.expect(t, 404, "GET", "/config/User?Name=mallory", "")
	if got := s.do(t, "GET", "/config/Port?IntfRef=fpPort1", "").object()["Description"]; got != tricky {
		t.Errorf("Description after the replay: %q; want %q", got, tricky)
	}
}

// TestConfigLogCannotDriveTheTerminal: any local account can have a write
// refused whose path holds a terminal's escape sequences (percent-encoded:
// a window title, a clear screen). An admin's `show config log` in a real
// terminal shows them as text; the terminal acts on none.
func TestConfigLogCannotDriveTheTerminal(t *testing.T) {
	needTool(t, "tmux")
	s := startServer(t, "")
	s.do(t, "POST", "/config/Bogus%1b%5d2%3bpwned%07%1b%5b2J", `{}`)
	s.do(t, "PATCH", "/config/Port", `{"IntfRef":"fpPort1","Description":"\u001b]2;pwned\u0007\u009b2J"}`)
	home := t.TempDir()
	p := startPane(t, []string{"HOME=" + home}, swmgrBin, "cli", "--socket", filepath.Join(s.dir, "swmgr.sock"), "--no-color")
	p.waitPrompt("switch>")
	scr := p.line("show config log | no-more", "switch>") // the refusal lists every kind: more than a page
	title, err := exec.Command("tmux", "display-message", "-p", "-t", p.name, "#{pane_title}").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(title), "pwned") {
		t.Errorf("the config log set the terminal's title: %q", title)
	}
	// The table may wrap the cell; its first line shows the escape as sent.
	if !strings.Contains(scr, "bogus%1b%5d2%3") || strings.ContainsRune(scr, 0x1b) || !strings.Contains(scr, "SeqNum") {
		t.Errorf("the refused write's path is not shown as sent:\n%s", scr)
	}
}
