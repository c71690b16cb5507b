package ansible

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/model"
)

// TestCommittedCollectionIsCurrent keeps the generated files of the
// collection equal to what the model makes, and finds generated modules of
// kinds that are gone. Regenerate with: go run ./cmd/swmgr ansible
func TestCommittedCollectionIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", Dir)
	files, err := Files(model.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is out of date (%v): run `go run ./cmd/swmgr ansible`", name, err)
		}
	}
	stale, err := Stale(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("generated modules of kinds that are gone: %v: run `go run ./cmd/swmgr ansible`", stale)
	}
}

// Every config kind gets a resource module, and a new kind or field
// reaches the collection by regeneration alone.
func TestEveryConfigKindHasAModule(t *testing.T) {
	reg := model.Builtin()
	files, err := Files(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range reg.Kinds() {
		if k.Class != model.Config {
			continue
		}
		mod := files["plugins/modules/"+ModuleName(k)+".py"]
		if mod == nil {
			t.Errorf("%s: no module %s", k.Name, ModuleName(k))
			continue
		}
		for _, f := range k.Fields {
			if settable(f) && !strings.Contains(string(mod), "\n      "+Snake(f.Name)+":\n") {
				t.Errorf("%s: the module does not document %s as %s", k.Name, f.Name, Snake(f.Name))
			}
		}
		if !strings.Contains(string(files["meta/runtime.yml"]), "- "+ModuleName(k)+"\n") {
			t.Errorf("%s: %s is not in the action group", k.Name, ModuleName(k))
		}
	}
	// A kind added to the model reaches the collection.
	extra := &model.Kind{Name: "ExampleServer", Class: model.Config, Doc: "An example server.", Fields: []*model.Field{
		{Name: "IPAddr", Type: model.String, Key: true, Format: model.FormatIPv4},
		{Name: "Secret", Type: model.String, Secret: model.Sealed},
	}}
	reg2, err := model.NewRegistry(append(append([]*model.Kind(nil), reg.Kinds()...), extra)...)
	if err != nil {
		t.Fatal(err)
	}
	files, err = Files(reg2)
	if err != nil {
		t.Fatal(err)
	}
	mod := string(files["plugins/modules/swmgr_example_server.py"])
	if !strings.Contains(mod, "ip_addr:") || !strings.Contains(mod, "no_log: true") || !strings.Contains(string(files["plugins/module_utils/swmgr_model.py"]), `"ExampleServer"`) {
		t.Errorf("a new kind's module:\n%s", mod)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"IPv4Intf": "ipv4_intf", "BGPv4Neighbor": "bgpv4_neighbor", "BGPGlobal": "bgp_global", "IntfRef": "intf_ref",
		"PRBSTxEnable": "prbs_tx_enable", "Mtu": "mtu", "NtpServer": "ntp_server", "LLDPGlobal": "lldp_global",
		"IfIndex": "if_index", "DstFileURI": "dst_file_uri", "LocalAS": "local_as", "UntagIntfList": "untag_intf_list",
		"VlanId": "vlan_id", "IPAddr": "ip_addr",
	} {
		if got := Snake(in); got != want {
			t.Errorf("Snake(%s) = %s; want %s", in, got, want)
		}
	}
}
