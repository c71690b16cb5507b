// Package kindprobe names declared kinds where TestKindNameProbes must
// find them: each line that names one says so in a comment, "want:" then
// each name and position it holds. The first five are the violations an
// earlier, syntactic version of the test missed but the first; the rest
// are other positions and spellings; the last ones are field names, which
// the test lets stand.
package kindprobe

import "github.com/swmgr/swmgr/internal/model"

type role string

const probeKind = "Vlan" // want: "Vlan" as constant declaration

func probes(k *model.Kind, name string, lookup func(string) *model.Kind, f func([]string)) map[string]bool {
	if k.Name == "User" { // want: "User" as comparison
		return nil
	}
	seen := map[string]bool{"User": true} // want: "User" as map key
	switch name {
	case "User": // want: "User" as switch case
		seen[name] = false
	}
	f([]string{"User", "SystemParam"})  // want: "User" as list element; "SystemParam" as list element
	if k.Name == model.ActionRollback { // want: "Rollback" as comparison
		return nil
	}
	lookup(probeKind)                // want: "Vlan" as argument
	lookup("Us" + "er")              // want: "User" as argument
	name = string(role("Port"))      // want: "Port" as assignment
	_ = seen["Vrf"]                  // want: "Vrf" as index
	_ = struct{ Kind string }{"Vrf"} // want: "Vrf" as struct field
	if name != "Span" {              // want: "Span" as comparison
		return map[string]bool{name: seen[name+"Vlan"]} // want: "Vlan" as operand of +
	}
	// Field names: an object's keys, its accessors' arguments, an index.
	o := model.Object{"Port": int64(22), "User": "admin"}
	_ = o.Int("Port") + int64(len(o.Str("User")))
	_ = o["Vrf"]
	return seen
}
