package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
	"github.com/swmgr/swmgr/internal/bind"
	"github.com/swmgr/swmgr/internal/model"
)

// lineDoor is a front door of its own, as a new one (gNOI, a web page,
// ZTP) would be written: one line in, one JSON line out, over the binding
// table and the declarations alone. It imports neither the REST nor the
// gNMI package, and neither of them knows it.
//
//	run <Action> [dry] <fields as JSON>
//	read <state kind>
type lineDoor struct {
	table  *bind.Table
	caller bind.Caller
}

func (d lineDoor) serve(ctx context.Context, line string) (string, error) {
	verb, rest, _ := strings.Cut(line, " ")
	name, rest, _ := strings.Cut(rest, " ")
	reg := d.table.Registry()
	switch verb {
	case "run":
		k := reg.Named(name)
		if k == nil || k.Class != model.Action {
			return "", fmt.Errorf("no action %s", name)
		}
		dry := false
		if after, ok := strings.CutPrefix(rest, "dry "); ok {
			dry, rest = true, after
		}
		body, err := model.DecodeBody([]byte(rest))
		if err != nil {
			return "", err
		}
		fields, err := k.ActionFields(body)
		if err != nil {
			return "", err
		}
		res, err := d.table.Run(ctx, bind.Call{Kind: k, Fields: fields, DryRun: dry, Caller: d.caller, Meta: bind.Meta{User: d.caller.Name, Source: "line"}})
		if err != nil {
			return "", err
		}
		out, err := json.Marshal(res)
		return string(out), err
	case "read":
		k := reg.Named(name)
		if k == nil || k.Class != model.State {
			return "", fmt.Errorf("no state kind %s", name)
		}
		objs, err := d.table.StateObjects(ctx, k)
		if err != nil {
			return "", err
		}
		out, err := json.Marshal(objs)
		return string(out), err
	}
	return "", fmt.Errorf("unknown verb %q", verb)
}

// actionLines are a run of each action the service declares, as an admin
// would make it through the line door: a dry run where the action reports
// one, else a run that its provider answers (done, or refused for what
// only it can know: a file that is not there).
var actionLines = map[string]string{
	"SaveConfig":             `run SaveConfig dry {}`,
	"ResetConfig":            `run ResetConfig dry {}`,
	"ResetConfigToFile":      `run ResetConfigToFile dry {"SrcFileURI":"file:///nonexistent/startup-config.json"}`,
	"ApplyConfig":            `run ApplyConfig dry {"ConfigData":{}}`,
	"ForceApplyConfig":       `run ForceApplyConfig dry {"ConfigData":{}}`,
	"ApplyConfigByFile":      `run ApplyConfigByFile dry {"SrcFileURI":"file:///nonexistent/startup-config.json"}`,
	"ForceApplyConfigByFile": `run ForceApplyConfigByFile dry {"SrcFileURI":"file:///nonexistent/startup-config.json"}`,
	"Rollback":               `run Rollback dry {"Revision":1}`,
	"ClearConfigLog":         `run ClearConfigLog {}`,
	"UserPassword":           `run UserPassword {"Name":"nobody","Password":"long-enough-password-1"}`,
	"AccountCommand":         `run AccountCommand {"Command":"show version","Context":"enable","Session":"s1","Seq":1}`,
	"ZtpRearm":               `run ZtpRearm {}`,
	"IntentFetch":            `run IntentFetch {}`,
	"CheckCompliance":        `run CheckCompliance dry {"Document":{"ConfigData":{}}}`,
	// No such neighbor on a fresh switch: the provider's 404.
	"ResetBGPv4NeighborByIPAddr":    `run ResetBGPv4NeighborByIPAddr {"IPAddr":"192.0.2.1"}`,
	"ResetBGPv4NeighborByInterface": `run ResetBGPv4NeighborByInterface {"IntfRef":"fpPort1"}`,
	"ResetBGPv6NeighborByIPAddr":    `run ResetBGPv6NeighborByIPAddr {"IPAddr":"2001:db8::1"}`,
	"ResetBGPv6NeighborByInterface": `run ResetBGPv6NeighborByInterface {"IntfRef":"fpPort1"}`,
	// The neighbour tables: none by address, nothing to do by interface.
	"ArpDeleteByIPv4Addr":  `run ArpDeleteByIPv4Addr {"IpAddr":"192.0.2.1"}`,
	"ArpDeleteByIfName":    `run ArpDeleteByIfName {"IfName":"fpPort1"}`,
	"ArpRefreshByIPv4Addr": `run ArpRefreshByIPv4Addr {"IpAddr":"192.0.2.1"}`,
	"ArpRefreshByIfName":   `run ArpRefreshByIfName {"IfName":"fpPort1"}`,
	"NdpDeleteByIPv6Addr":  `run NdpDeleteByIPv6Addr {"IpAddr":"2001:db8::1"}`,
	"NdpDeleteByIfName":    `run NdpDeleteByIfName {"IfName":"fpPort1"}`,
	"NdpRefreshByIPv6Addr": `run NdpRefreshByIPv6Addr {"IpAddr":"2001:db8::1"}`,
	"NdpRefreshByIfName":   `run NdpRefreshByIfName {"IfName":"fpPort1"}`,
	"ClearMacTable":        `run ClearMacTable dry {"VlanId":10,"IntfRef":"fpPort1"}`,
	"ResetBfdSession":      `run ResetBfdSession {"IpAddr":"192.0.2.1"}`,
}

// TestNewFrontDoorReachesEverything: a front door written against the
// binding table alone runs every declared action and reads every declared
// state-only kind, each answered by its provider (never "not provided",
// never refused by the table for an admin), and the table refuses a
// reader the admin's actions for it too: authorization is not the door's.
func TestNewFrontDoorReachesEverything(t *testing.T) {
	svc := openSim(t)
	ctx := context.Background()
	admin := lineDoor{table: svc.Table, caller: bind.Caller{Name: "root", Role: model.RoleAdmin}}
	reader := lineDoor{table: svc.Table, caller: bind.Caller{Name: "rd", Role: model.RoleReader}}
	for _, k := range svc.Engine.Registry().Kinds() {
		switch {
		case k.Class == model.Action:
			line, ok := actionLines[k.Name]
			if !ok {
				t.Errorf("action %s: no line for it here; add one", k.Name)
				continue
			}
			out, err := admin.serve(ctx, line)
			var notRun *bind.NotRun
			if errors.As(err, &notRun) || statusOf(err) == http.StatusNotImplemented {
				t.Errorf("%s: the table did not reach its provider: %v", line, err)
			}
			t.Logf("%s -> %s %v", line, out, err)
			if k.WriteRole() == model.RoleAdmin && k.Self == "" {
				if _, err := reader.serve(ctx, line); !errors.As(err, &notRun) || statusOf(err) != http.StatusForbidden {
					t.Errorf("%s as a reader: %v, want the table's 403", line, err)
				}
			}
		case k.Class == model.State && k.Source != model.SourceConfigLog:
			if _, err := admin.serve(ctx, "read "+k.Name); err != nil {
				t.Errorf("read %s: %v", k.Name, err)
			}
		}
	}
}

func statusOf(err error) int {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}
