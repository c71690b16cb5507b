package bind_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// echo is an operator's action that answers its Text.
var echo = &model.Kind{
	Name: "EchoTest", Class: model.Action, Role: model.RoleOperator,
	Doc:    "Answers its Text.",
	Fields: []*model.Field{{Name: "Text", Type: model.String, MaxLen: 32}},
}

func registry(t *testing.T) *model.Registry {
	t.Helper()
	reg, err := model.NewRegistry(append(model.Builtin().Kinds(), echo)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func status(err error) int {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// TestAuthorizeOnce: who may run an action is decided by the table, from
// the declaration (role, Self) and the provider's Needs, whatever the
// front door; a refusal is a *NotRun, and the action never runs.
func TestAuthorizeOnce(t *testing.T) {
	reg := registry(t)
	ran := 0
	needsAdmin := func(c bind.Call) bind.Need {
		if c.Fields.Str("Text") == "outside" {
			return bind.Need{Role: model.RoleAdmin, Field: "Text", Why: "only an admin may echo outside"}
		}
		return bind.Need{}
	}
	run := func(context.Context, bind.Call) (bind.Result, error) { ran++; return bind.Result{}, nil }
	pw := reg.Named("UserPassword")
	table, err := bind.Partial(reg, bind.Rows{Of: "test", Rows: []bind.Binding{
		{Kind: "EchoTest", Action: &bind.Action{Run: run, Needs: needsAdmin}},
		{Kind: "UserPassword", Action: &bind.Action{Run: run}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rd, op, admin := bind.Caller{Name: "rd", Role: model.RoleReader}, bind.Caller{Name: "op", Role: model.RoleOperator}, bind.Caller{Name: "root", Role: model.RoleAdmin}
	for _, tc := range []struct {
		what   string
		kind   *model.Kind
		caller bind.Caller
		fields model.Object
		ok     bool
	}{
		{"a reader, an operator's action", echo, rd, model.Object{"Text": "x"}, false},
		{"an operator, its action", echo, op, model.Object{"Text": "x"}, true},
		{"an operator, what the provider says needs an admin", echo, op, model.Object{"Text": "outside"}, false},
		{"an admin, what needs an admin", echo, admin, model.Object{"Text": "outside"}, true},
		{"a reader, its own password", pw, rd, model.Object{"Name": "rd"}, true},
		{"a reader, another's password", pw, rd, model.Object{"Name": "admin"}, false},
		{"an operator, a reader's password", pw, op, model.Object{"Name": "rd"}, false},
		{"an admin, anyone's password", pw, admin, model.Object{"Name": "rd"}, true},
	} {
		before := ran
		_, err := table.Run(t.Context(), bind.Call{Kind: tc.kind, Fields: tc.fields, Caller: tc.caller})
		var notRun *bind.NotRun
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.what, err)
		case !tc.ok && (!errors.As(err, &notRun) || status(err) != http.StatusForbidden || ran != before):
			t.Errorf("%s: %v (ran %d times), want a 403 before it runs", tc.what, err, ran-before)
		}
	}
}

// TestMayChange: a commit computed for a caller (a rollback, a candidate)
// may not touch a kind whose declared write role is above the caller's.
func TestMayChange(t *testing.T) {
	reg := model.Builtin()
	user, ntp := reg.Lookup(model.Config, "User"), reg.Lookup(model.Config, "NtpServer")
	allow := bind.Caller{Name: "op", Role: model.RoleOperator}.MayChange("Rollback")
	if allow(ntp, backend.Create, "IpAddr=192.0.2.1") != nil || allow(user, backend.Delete, "Name=bob") == nil {
		t.Error("an operator's commit: NtpServer refused or User allowed")
	}
	if (bind.Caller{Name: "root", Role: model.RoleAdmin}).MayChange("Rollback") != nil {
		t.Error("an admin's commit is vetted")
	}
}

// TestBindingOrder: once the engine took the drivers, a provider may add
// only shares of state; once sealed, nothing; before sealing nothing is
// run or read.
func TestBindingOrder(t *testing.T) {
	reg := registry(t)
	table := bind.NewTable(reg)
	vlan := func(d *backend.Driver) bind.Provider {
		return bind.Rows{Of: "late", Rows: []bind.Binding{{Kind: "Vlan", Driver: d}}}
	}
	apply := func(context.Context, backend.Change) (model.Object, error) { return nil, nil }
	state := func(context.Context, model.Object) (model.Object, error) { return model.Object{"OperState": "UP"}, nil }
	if err := table.Bind(vlan(&backend.Driver{Apply: apply})); err != nil {
		t.Fatal(err)
	}
	drivers := table.Drivers()
	if err := table.Bind(vlan(&backend.Driver{Apply: apply})); err == nil || !strings.Contains(err.Error(), "after the engine took the drivers") {
		t.Errorf("an applying driver bound after the engine took them: %v", err)
	}
	if err := table.Bind(vlan(&backend.Driver{State: state})); err != nil {
		t.Errorf("a share of state after the engine took the drivers: %v", err)
	}
	if st, err := drivers["Vlan"].State(t.Context(), nil); err != nil || st["OperState"] != "UP" {
		t.Errorf("the engine's driver does not read the late share: %v %v", st, err)
	}
	if _, err := table.Run(t.Context(), bind.Call{Kind: echo}); err == nil {
		t.Error("an action ran before the table was sealed")
	}
	if err := table.Seal(); err == nil || !strings.Contains(err.Error(), "kind ") {
		t.Errorf("an incomplete table sealed: %v", err)
	}
}
