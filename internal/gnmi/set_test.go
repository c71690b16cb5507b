package gnmi

import (
	"context"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/gnmi/proto/gnmi_ext"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
)

// commitExt is the commit-confirmed extension with id and action.
func commitExt(id string, action any) []*gnmi_ext.Extension {
	c := &gnmi_ext.Commit{Id: id}
	switch a := action.(type) {
	case *gnmi_ext.CommitRequest:
		c.Action = &gnmi_ext.Commit_Commit{Commit: a}
	case *gnmi_ext.CommitConfirm:
		c.Action = &gnmi_ext.Commit_Confirm{Confirm: a}
	case *gnmi_ext.CommitCancel:
		c.Action = &gnmi_ext.Commit_Cancel{Cancel: a}
	case *gnmi_ext.CommitSetRollbackDuration:
		c.Action = &gnmi_ext.Commit_SetRollbackDuration{SetRollbackDuration: a}
	}
	return []*gnmi_ext.Extension{{Ext: &gnmi_ext.Extension_Commit{Commit: c}}}
}

// refused checks that a Set got code with a message holding msg, and that
// it changed nothing: the running revision and what awaits confirmation
// are as before.
func refused(t *testing.T, fx *fixture, what string, code codes.Code, msg string, set func() error) {
	t.Helper()
	rev, pending := fx.f.E.Revision(), fx.srv.o.History.PendingConfirm()
	err := set()
	if codeOfErr(err) != code || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: got %v, want %s naming %q", what, err, code, msg)
	}
	if now := fx.f.E.Revision(); now != rev {
		t.Errorf("%s: the running revision went from %d to %d", what, rev, now)
	}
	if now := fx.srv.o.History.PendingConfirm(); (now == nil) != (pending == nil) || now != nil && *now != *pending {
		t.Errorf("%s: what awaits confirmation went from %+v to %+v", what, pending, now)
	}
}

// A value is read as the REST API reads a body: malformed JSON is
// InvalidArgument (it was Internal for a field's value), and a member
// given twice is refused (it was taken, the last one winning), in both
// origins; nothing is committed.
func TestSetReadsValuesAsREST(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	port := "/config/Port[IntfRef=fpPort1]"
	ocPort := "/interfaces/interface[name=fpPort1]/config"
	for _, c := range []struct {
		name, origin, path, val, msg string
	}{
		{"a field's unfinished value", "swmgr", port + "/Mtu", `{`, "malformed JSON"},
		{"a field's value and more", "swmgr", port + "/Description", `"a" "b"`, "malformed JSON"},
		{"a field's value that smuggles another field", "swmgr", port + "/Description", `"a","Mtu":9000`, "malformed JSON"},
		{"a field's value not in UTF-8", "swmgr", port + "/Description", "\"a\xff\"", "not valid UTF-8"},
		{"a field's value with half a surrogate pair", "swmgr", port + "/Description", `"a\ud800"`, "surrogate"},
		{"a field's empty value", "swmgr", port + "/Mtu", ``, "malformed JSON"},
		{"an object's malformed value", "swmgr", port, `{"Mtu":9000,}`, "malformed JSON"},
		{"an object's member given twice", "swmgr", port, `{"Mtu":9000,"Mtu":1500}`, `"Mtu" is given twice`},
		{"an object's member given with and without its module", "swmgr", port, `{"Mtu":9000,"swmgr:Mtu":1500}`, `"Mtu" is given twice`},
		{"an OpenConfig leaf's malformed value", "openconfig", ocPort + "/mtu", `9000}`, "malformed JSON"},
		{"an OpenConfig container's malformed value", "openconfig", ocPort, `{"mtu":9000`, "malformed JSON"},
		{"an OpenConfig container's member given twice", "openconfig", ocPort, `{"mtu":9000,"mtu":1500}`, `"mtu" is given twice`},
		{"an OpenConfig container's member given with and without its module", "openconfig", ocPort, `{"mtu":9000,"openconfig-interfaces:mtu":1500}`, `"mtu" is given twice`},
		{"an OpenConfig member given twice deeper down", "openconfig", "/interfaces/interface[name=fpPort1]", `{"config":{"mtu":9000,"mtu":1500}}`, `"mtu" is given twice`},
	} {
		refused(t, fx, c.name, codes.InvalidArgument, c.msg, func() error {
			_, err := fx.c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{{Path: p(c.origin, c.path), Val: jv(c.val)}}})
			return err
		})
	}
	// The same values, well formed, are taken.
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Update: []*gpb.Update{
		{Path: p("swmgr", port), Val: jv(`{"swmgr:Mtu":9000}`)},
		{Path: p("openconfig", ocPort), Val: jv(`{"openconfig-interfaces:description":"up"}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	if o := fx.f.Object("Port", "fpPort1"); o.Int("Mtu") != 9000 || o.Str("Description") != "up" {
		t.Errorf("fpPort1: %v", o)
	}
}

// The commit id becomes the commit's comment: the rule of a REST Comment
// applies (one line, no control characters, at most model.MaxComment
// with what swmgr adds), InvalidArgument and nothing committed; to a
// confirm or cancel as much as to a commit.
func TestCommitIDIsAComment(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	mtu := []*gpb.Update{{Path: p("swmgr", "/config/Port[IntfRef=fpPort1]/Mtu"), Val: jv(`9000`)}}
	for _, c := range []struct{ name, id, msg string }{
		{"ESC", "c1\x1b[2J", "U+001B, a control character"},
		{"BEL", "c1\a", "U+0007, a control character"},
		{"a newline", "c1\nforged line", "U+000A, a control character"},
		{"a line separator", "c1\u2028", "U+2028, a line separator"},
		{"a megabyte", strings.Repeat("c", 1<<20), "too long"},
		{"one byte too many", strings.Repeat("c", maxCommitID+1), "too long"},
	} {
		refused(t, fx, "commit id with "+c.name, codes.InvalidArgument, c.msg, func() error {
			_, err := fx.c.Set(ctx, &gpb.SetRequest{Update: mtu, Extension: commitExt(c.id, &gnmi_ext.CommitRequest{})})
			return err
		})
	}
	// The longest id is taken; its commit and its cancel's are comments
	// within the limit, and a confirm with a bad id is refused as well.
	long := strings.Repeat("c", maxCommitID)
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Update: mtu, Extension: commitExt(long, &gnmi_ext.CommitRequest{})}); err != nil {
		t.Fatal(err)
	}
	refused(t, fx, "a confirm whose id has ESC", codes.InvalidArgument, "U+001B", func() error {
		_, err := fx.c.Set(ctx, &gpb.SetRequest{Extension: commitExt("c1\x1b", &gnmi_ext.CommitConfirm{})})
		return err
	})
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Extension: commitExt(long, &gnmi_ext.CommitCancel{})}); err != nil {
		t.Fatal(err)
	}
	if fx.srv.o.History.PendingConfirm() != nil {
		t.Error("the cancelled commit still awaits confirmation")
	}
}

// rollback_duration, at the commit and in set_rollback_duration, is in
// REST's range of Confirm, 1..86400 s: a huge one no longer overflows the
// deadline (a deadline in 1734, never reached, every write blocked).
func TestRollbackDurationRange(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	mtu := []*gpb.Update{{Path: p("swmgr", "/config/Port[IntfRef=fpPort1]/Mtu"), Val: jv(`9000`)}}
	bad := []struct {
		name string
		d    *durationpb.Duration
	}{
		{"10,000 years", &durationpb.Duration{Seconds: 315576000000}},
		{"a day and a second", &durationpb.Duration{Seconds: 86401}},
		{"zero", &durationpb.Duration{}},
		{"negative", &durationpb.Duration{Seconds: -5}},
		{"a microsecond", &durationpb.Duration{Nanos: 1000}},
		{"not a valid duration", &durationpb.Duration{Seconds: 1, Nanos: -1}},
	}
	for _, c := range bad {
		refused(t, fx, "a commit of "+c.name, codes.InvalidArgument, "rollback_duration", func() error {
			_, err := fx.c.Set(ctx, &gpb.SetRequest{Update: mtu, Extension: commitExt("c1", &gnmi_ext.CommitRequest{RollbackDuration: c.d})})
			return err
		})
	}
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Update: mtu, Extension: commitExt("c1", &gnmi_ext.CommitRequest{RollbackDuration: durationpb.New(24 * time.Hour)})}); err != nil {
		t.Fatalf("a commit of a day: %v", err)
	}
	for _, c := range append(bad, struct {
		name string
		d    *durationpb.Duration
	}{"none", nil}) {
		refused(t, fx, "set_rollback_duration of "+c.name, codes.InvalidArgument, "rollback_duration", func() error {
			_, err := fx.c.Set(ctx, &gpb.SetRequest{Extension: commitExt("c1", &gnmi_ext.CommitSetRollbackDuration{RollbackDuration: c.d})})
			return err
		})
	}
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Extension: commitExt("c1", &gnmi_ext.CommitSetRollbackDuration{RollbackDuration: durationpb.New(time.Hour)})}); err != nil {
		t.Fatalf("set_rollback_duration of an hour: %v", err)
	}
	if left := time.Until(time.Unix(0, fx.srv.o.History.PendingConfirm().Deadline)); left <= 0 || left > time.Hour {
		t.Errorf("the deadline is %v away; want within the hour set", left)
	}
}

// The fate of a commit awaiting confirmation (confirm, cancel, a new
// rollback duration) is for the roles of the kinds it changed: an operator
// cannot undo (nor keep) an admin's new TACACS+ server, whose id anyone
// reads in /revisions/pending, but decides an operator's commit.
func TestCommitFateNeedsTheRolesOfItsKinds(t *testing.T) {
	fx := start(t, Options{})
	ctx := context.Background()
	op := dial(t, fx.addr, creds{"operator", "operator-pass"})
	tacacs := p("swmgr", "/config/Tacacs[ServerIp=192.0.2.49]")
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{
		Update:    []*gpb.Update{{Path: tacacs, Val: jv(`{}`)}, {Path: p("swmgr", "/config/Port[IntfRef=fpPort1]/Mtu"), Val: jv(`9000`)}},
		Extension: commitExt("adm", &gnmi_ext.CommitRequest{RollbackDuration: durationpb.New(time.Hour)}),
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		action any
	}{
		{"cancel", &gnmi_ext.CommitCancel{}},
		{"set_rollback_duration of a second", &gnmi_ext.CommitSetRollbackDuration{RollbackDuration: durationpb.New(time.Second)}},
		{"confirm", &gnmi_ext.CommitConfirm{}},
	} {
		refused(t, fx, "an operator's "+c.name+" of an admin's commit", codes.PermissionDenied, "only admins may change Tacacs objects", func() error {
			_, err := op.Set(ctx, &gpb.SetRequest{Extension: commitExt("adm", c.action)})
			return err
		})
	}
	if !fx.f.Exists("Tacacs", "192.0.2.49") {
		t.Fatal("the admin's TACACS+ server is gone")
	}
	if _, err := fx.c.Set(ctx, &gpb.SetRequest{Extension: commitExt("adm", &gnmi_ext.CommitConfirm{})}); err != nil {
		t.Fatalf("the admin's confirm: %v", err)
	}
	// An operator's own kinds: the operator decides, cancel as confirm.
	ntp := []*gpb.Update{{Path: p("swmgr", "/config/NtpServer[IpAddr=192.0.2.10]"), Val: jv(`{}`)}}
	for _, action := range []any{&gnmi_ext.CommitCancel{}, &gnmi_ext.CommitConfirm{}} {
		if _, err := fx.c.Set(ctx, &gpb.SetRequest{Update: ntp, Extension: commitExt("ntp", &gnmi_ext.CommitRequest{})}); err != nil {
			t.Fatal(err)
		}
		if _, err := op.Set(ctx, &gpb.SetRequest{Extension: commitExt("ntp", &gnmi_ext.CommitSetRollbackDuration{RollbackDuration: durationpb.New(time.Hour)})}); err != nil {
			t.Fatalf("an operator's set_rollback_duration of an NTP commit: %v", err)
		}
		if _, err := op.Set(ctx, &gpb.SetRequest{Extension: commitExt("ntp", action)}); err != nil {
			t.Fatalf("an operator's %T of an NTP commit: %v", action, err)
		}
	}
	if fx.srv.o.History.PendingConfirm() != nil || !fx.f.Exists("NtpServer", "192.0.2.10") {
		t.Error("the operator's confirm did not keep the NTP server")
	}
}
