package linux

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/nftacl"
)

// ACLs (Acl, AclRule) and the control-plane ACL (ControlPlaneAclRule) are
// nftables rules (package nftacl; docs/linux-backend.md says why not tc
// flower). The changes of one Tx edit a staged copy of the applied
// objects; the flush renders the whole ruleset from it and sends nft the
// difference as one transaction (`nft -f -`), whose undo is the reverse
// difference. The first flush after the start replaces swmgr's tables
// whole, so the kernel holds exactly the stored ACLs whatever a crash left.

// aclKinds are the kinds staged together into one nft transaction.
var aclKinds = []string{"AclRule", "Acl", "ControlPlaneAclRule"}

// DefaultControlPlanePorts are the listeners' TCP ports when Options says
// none: SSH's 22 (sshd); HTTPS and gNMI only where serve tells.
var DefaultControlPlanePorts = map[string]int{"SSH": 22}

type aclRunner struct {
	mu      sync.Mutex
	objs    map[string]map[string]model.Object // committed, by kind and key
	applied *nftacl.Ruleset                    // what nft holds; nil before the first flush
}

// aclStage is a Tx's copy of the ACL objects.
type aclStage map[string]map[string]model.Object

func (b *Backend) aclStage(tx *Tx, kind string) aclStage {
	return tx.staged("nftables", kind, func() any {
		b.acl.mu.Lock()
		defer b.acl.mu.Unlock()
		st := aclStage{}
		for _, k := range aclKinds {
			st[k] = map[string]model.Object{}
			for key, o := range b.acl.objs[k] {
				st[k][key] = o
			}
		}
		return st
	}, b.flushACLs).(aclStage)
}

// aclDriver is the driver of each of the ACL kinds: a change edits the
// Tx's stage.
func aclDriver(kind string, check func(b *Backend, c changeView) error) *driver {
	return &driver{
		check: check,
		ensure: func(b *Backend, tx *Tx, after, before model.Object) error {
			st := b.aclStage(tx, kind)
			reg := b.opts.Model
			if reg == nil {
				reg = model.Builtin()
			}
			k := reg.Lookup(model.Config, kind)
			if before != nil {
				delete(st[kind], k.Key(before))
			}
			st[kind][k.Key(after)] = after.Clone()
			return nil
		},
		remove: func(b *Backend, tx *Tx, before model.Object) error {
			reg := b.opts.Model
			if reg == nil {
				reg = model.Builtin()
			}
			delete(b.aclStage(tx, kind)[kind], reg.Lookup(model.Config, kind).Key(before))
			return nil
		},
	}
}

var (
	aclRuleDriver = aclDriver("AclRule", noCheck)
	aclDriverOf   = aclDriver("Acl", checkAcl)
	cpAclDriver   = aclDriver("ControlPlaneAclRule", checkControlPlaneRule)
)

// checkAcl: every interface is a netdev of this switch (a loopback is not).
func checkAcl(b *Backend, c changeView) error {
	for _, in := range c.after().List("IntfList") {
		if _, loopback, err := b.netdevOf(in); err != nil {
			return err
		} else if loopback {
			return &Refusal{Field: "IntfList", Msg: fmt.Sprintf("%s is a loopback: an ACL applies to ports, LAGs and VLAN interfaces", in)}
		}
	}
	return nil
}

// checkControlPlaneRule: the switch runs the rule's listener.
func checkControlPlaneRule(b *Backend, c changeView) error {
	if b.controlPlanePort(c.after().Str("Service")) == 0 {
		return &Refusal{Field: "Service", Msg: fmt.Sprintf("this switch runs no %s listener", c.after().Str("Service"))}
	}
	return nil
}

func (b *Backend) controlPlanePort(service string) int {
	if p, ok := b.opts.ControlPlanePorts[service]; ok {
		return p
	}
	return DefaultControlPlanePorts[service]
}

// ruleset renders staged objects in nftacl's terms.
func (b *Backend) ruleset(st aclStage) (nftacl.Ruleset, error) {
	var rs nftacl.Ruleset
	for _, key := range slices.Sorted(maps.Keys(st["Acl"])) {
		a := st["Acl"][key]
		acl := nftacl.ACL{Name: a.Str("AclName"), Direction: a.Str("Direction"), Type: a.Str("AclType")}
		for _, in := range a.List("IntfList") {
			dev, _, err := b.netdevOf(in)
			if err != nil {
				return rs, err
			}
			acl.Devices = append(acl.Devices, dev)
		}
		for _, name := range a.List("RuleNameList") {
			r := st["AclRule"][name]
			if r == nil {
				return rs, fmt.Errorf("ACL %s names rule %s, which is not applied", acl.Name, name)
			}
			acl.Rules = append(acl.Rules, aclRule(r))
		}
		rs.ACLs = append(rs.ACLs, acl)
	}
	cp := slices.SortedFunc(maps.Values(st["ControlPlaneAclRule"]), func(a, b model.Object) int { return cmp.Compare(a.Int("Sequence"), b.Int("Sequence")) })
	for _, o := range cp {
		src, _ := model.AclPrefix(o, "SourceIp", "SourceMask")
		rs.ControlPlane = append(rs.ControlPlane, nftacl.ControlRule{Name: o.Str("Name"), Port: uint16(b.controlPlanePort(o.Str("Service"))), Src: src, Allow: o.Str("Action") == model.AclAllow})
	}
	return rs, nil
}

// aclRule is an AclRule in nftacl's terms.
func aclRule(r model.Object) nftacl.Rule {
	src, _ := model.AclPrefix(r, "SourceIp", "SourceMask")
	dst, _ := model.AclPrefix(r, "DestIp", "DestMask")
	mac := func(f string) string { return strings.ToLower(strings.ReplaceAll(r.Str(f), "-", ":")) }
	return nftacl.Rule{
		Name: r.Str("RuleName"), SrcMAC: mac("SourceMac"), DstMAC: mac("DestMac"), Src: src, Dst: dst,
		Proto: r.Str("Proto"), SrcPort: uint16(r.Int("L4SrcPort")), DstPort: uint16(r.Int("L4DstPort")),
		PortMatch: r.Str("L4PortMatch"), MinPort: uint16(r.Int("L4MinPort")), MaxPort: uint16(r.Int("L4MaxPort")),
		DSCP: int(r.Int("Dscp")), Deny: r.Str("Action") == model.AclDeny, Log: r.Bool("Log"),
	}
}

func (b *Backend) flushACLs(tx *Tx, value any) error {
	st := value.(aclStage)
	want, err := b.ruleset(st)
	if err != nil {
		return err
	}
	b.acl.mu.Lock()
	prev, prevObjs := b.acl.applied, b.acl.objs
	b.acl.mu.Unlock()
	if prev != nil && reflect.DeepEqual(*prev, want) {
		b.setACLs(st, prev)
		return nil
	}
	return tx.change("nft: apply the ACLs",
		func() error {
			if err := b.nft(context.Background(), nftacl.Script(prev, want)); err != nil {
				return err
			}
			b.setACLs(st, &want)
			return nil
		},
		func() error {
			back := nftacl.Ruleset{}
			if prev != nil {
				back = *prev
			}
			if err := b.nft(context.Background(), nftacl.Script(&want, back)); err != nil {
				return err
			}
			b.acl.mu.Lock()
			b.acl.objs, b.acl.applied = prevObjs, prev
			b.acl.mu.Unlock()
			return nil
		})
}

func (b *Backend) setACLs(st aclStage, rs *nftacl.Ruleset) {
	b.acl.mu.Lock()
	b.acl.objs, b.acl.applied = st, rs
	b.acl.mu.Unlock()
}

// nftCommand is argv run in the switch's namespace.
func (b *Backend) nftCommand(ctx context.Context, args ...string) *exec.Cmd {
	if ns := b.opts.Kernel.Netns; ns != "" {
		return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, "nft"}, args...)...)
	}
	return exec.CommandContext(ctx, "nft", args...)
}

// nft runs a script as one transaction.
func (b *Backend) nft(ctx context.Context, script string) error {
	cmd := b.nftCommand(ctx, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nft -f: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// AclRuleStates lists every applied ACL's rules with their counters, read
// from nft.
func (b *Backend) AclRuleStates(ctx context.Context) ([]model.Object, error) {
	b.acl.mu.Lock()
	applied := b.acl.applied
	b.acl.mu.Unlock()
	out := []model.Object{}
	if applied == nil || len(applied.ACLs) == 0 {
		return out, nil
	}
	cmd := b.nftCommand(ctx, "-j", "list", "table", "netdev", nftacl.Table)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	listing, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("nft -j list table netdev %s: %w: %s", nftacl.Table, err, strings.TrimSpace(stderr.String()))
	}
	counts, err := nftacl.Counters(listing)
	if err != nil {
		return nil, err
	}
	for _, a := range applied.ACLs {
		chain := counts[nftacl.Chain(a.Name, a.Direction)]
		for i, r := range a.Rules {
			c := chain[r.Name]
			action := model.AclAllow
			if r.Deny {
				action = model.AclDeny
			}
			out = append(out, model.Object{"AclName": a.Name, "Direction": a.Direction, "RuleName": r.Name, "AclType": a.Type, "Sequence": int64(i + 1), "Action": action, "MatchedPackets": c.Packets, "MatchedBytes": c.Bytes})
		}
	}
	return out, nil
}
