// Package ansible generates the parts of the Ansible collection swmgr.switch
// (ansible/ansible_collections/swmgr/switch) that follow from the object
// model, so that a new kind or field reaches the collection without a hand
// edit, as it reaches the OpenAPI document:
//
//   - plugins/module_utils/swmgr_model.py: every kind's fields as the
//     modules read them (option name, API name, type, choices, secrecy,
//     keys), from which module_utils/swmgr_resource.py builds each module's
//     argument spec at run time;
//   - plugins/modules/swmgr_<kind>.py: one resource module per config kind
//     (swmgr_ntp_server for NtpServer), whose DOCUMENTATION lists the
//     kind's fields with their docs, and swmgr_save from SaveConfig's
//     fields;
//   - meta/runtime.yml: the action group "swmgr" of every module, so that a
//     play sets the connection options once with module_defaults.
//
// The hand-written rest of the collection (the HTTP client, the states
// merged/replaced/overridden/deleted/gathered/rendered, swmgr_config,
// swmgr_confirm, swmgr_rollback, swmgr_facts, swmgr_object, the fleet role)
// is in the tree beside them; docs/ansible.md describes the whole.
// TestCommittedCollectionIsCurrent keeps the committed files equal to what
// Files makes: regenerate with `go run ./cmd/swmgr ansible`.
package ansible

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/swmgr/swmgr/internal/model"
)

// Dir is where the collection lives in the source tree.
const Dir = "ansible/ansible_collections/swmgr/switch"

// HandWritten are the collection's modules that are not generated; the
// action group lists them with the generated ones.
var handWritten = []string{"swmgr_config", "swmgr_confirm", "swmgr_facts", "swmgr_object", "swmgr_rollback"}

// Snake turns a model name into an Ansible name: IPv4Intf ipv4_intf,
// BGPv4Neighbor bgpv4_neighbor, IntfRef intf_ref, PRBSTxEnable
// prbs_tx_enable.
func Snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			// A lower-case letter before a digit belongs to the acronym
			// before it: IPv4, BGPv4.
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1]) && !(i+2 < len(r) && unicode.IsDigit(r[i+2]))
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// ModuleName is the resource module of a config kind.
func ModuleName(k *model.Kind) string { return "swmgr_" + Snake(k.Name) }

// fieldSpec is one field as swmgr_model.py declares it.
type fieldSpec struct {
	Option   string   `json:"option"`
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Elements string   `json:"elements,omitempty"`
	Choices  []string `json:"choices,omitempty"`
	Key      bool     `json:"key,omitempty"`
	Secret   bool     `json:"secret,omitempty"`
	// Transient: swmgr never stores the value (a User's password), so an
	// edit carrying it cannot wait in a candidate.
	Transient bool        `json:"transient,omitempty"`
	Settable  bool        `json:"settable"`
	Sub       []fieldSpec `json:"sub,omitempty"`
	// Default is a key field's value when an object is given without it
	// (a BGP neighbor's Vrf "default" and IntfRef ""), as the switch
	// defaults it: the modules address the object with it. Absent: the
	// key must be given.
	Default json.RawMessage `json:"default,omitempty"`
}

// kindSpec is one kind as swmgr_model.py declares it.
type kindSpec struct {
	Module    string      `json:"module"`
	Singleton bool        `json:"singleton"`
	Creatable bool        `json:"creatable"`
	Keys      []string    `json:"keys"`
	Fields    []fieldSpec `json:"fields"`
}

var ansibleType = map[model.Type]string{model.String: "str", model.Int: "int", model.Bool: "bool", model.StringList: "list", model.Record: "dict", model.RecordList: "list", model.Document: "dict"}

// settable: a client may give the field (keys included).
func settable(f *model.Field) bool { return !f.ReadOnly && f.NotYet == "" }

func fieldsOf(owner string, fields []*model.Field) ([]fieldSpec, error) {
	out := make([]fieldSpec, 0, len(fields))
	seen := map[string]string{}
	for _, f := range fields {
		fs := fieldSpec{Option: Snake(f.Name), Name: f.Name, Type: ansibleType[f.Type], Choices: f.Enum, Key: f.Key, Secret: f.Secret != model.Public, Transient: f.Secret == model.Transient, Settable: settable(f)}
		if f.Key && f.Default != nil && !f.Required {
			d, err := json.Marshal(f.Default)
			if err != nil {
				return nil, fmt.Errorf("ansible: %s.%s: default: %w", owner, f.Name, err)
			}
			fs.Default = d
		}
		if other, dup := seen[fs.Option]; dup {
			return nil, fmt.Errorf("ansible: %s: fields %s and %s both make the option %s", owner, other, f.Name, fs.Option)
		}
		seen[fs.Option] = f.Name
		switch f.Type {
		case model.StringList:
			fs.Elements = "str"
		case model.RecordList:
			fs.Elements = "dict"
		}
		if f.Type == model.Record || f.Type == model.RecordList {
			sub, err := fieldsOf(owner+"."+f.Name, f.Sub)
			if err != nil {
				return nil, err
			}
			fs.Sub = sub
		}
		out = append(out, fs)
	}
	return out, nil
}

// Files returns the generated files, by path below Dir.
func Files(reg *model.Registry) (map[string][]byte, error) {
	files := map[string][]byte{}
	kinds := map[string]kindSpec{}
	modules := append([]string(nil), handWritten...)
	for _, k := range reg.Kinds() {
		if k.Class != model.Config {
			continue
		}
		fields, err := fieldsOf(k.Name, k.Fields)
		if err != nil {
			return nil, err
		}
		ks := kindSpec{Module: ModuleName(k), Singleton: k.Singleton, Creatable: k.Creatable(), Keys: []string{}, Fields: fields}
		for _, f := range k.Keys() {
			ks.Keys = append(ks.Keys, f.Name)
		}
		kinds[k.Name] = ks
		files["plugins/modules/"+ks.Module+".py"] = resourceModule(k)
		modules = append(modules, ks.Module)
	}
	save := reg.SaveAction() // the action swmgr_save runs
	if save == nil {
		return nil, fmt.Errorf("ansible: no action saves the configuration, for swmgr_save")
	}
	saveFields, err := fieldsOf(save.Name, save.Fields)
	if err != nil {
		return nil, err
	}
	files["plugins/modules/swmgr_save.py"] = saveModule(save)
	modules = append(modules, "swmgr_save")
	sort.Strings(modules)

	spec, err := json.MarshalIndent(map[string]any{"kinds": kinds, "actions": map[string]any{save.Name: saveFields}}, "", " ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("\"\"\"What swmgr's object model declares, as the collection's modules read it.\"\"\"\n\n")
	b.WriteString("from __future__ import absolute_import, division, print_function\n__metaclass__ = type\n\nimport json\n\n")
	b.WriteString("# The model, generated from swmgr's declaration of every kind.\n")
	fmt.Fprintf(&b, "MODEL = json.loads(r'''%s''')\n\nKINDS = MODEL['kinds']\nACTIONS = MODEL['actions']\n", spec)
	files["plugins/module_utils/swmgr_model.py"] = b.Bytes()

	var rt bytes.Buffer
	rt.WriteString("# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.\n---\nrequires_ansible: '>=2.14.0'\naction_groups:\n  swmgr:\n")
	for _, m := range modules {
		fmt.Fprintf(&rt, "    - %s\n", m)
	}
	files["meta/runtime.yml"] = rt.Bytes()
	return files, nil
}

const header = "# -*- coding: utf-8 -*-\n# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.\n# Apache-2.0 (see LICENSE)\n\n"

// q quotes a string for YAML (a JSON string is a YAML scalar).
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// optionDocs writes the YAML of fields as module options at indent.
func optionDocs(b *bytes.Buffer, fields []*model.Field, indent string, required bool) {
	for _, f := range fields {
		if !settable(f) {
			continue
		}
		fmt.Fprintf(b, "%s%s:\n", indent, Snake(f.Name))
		desc := []string{"API field C(" + f.Name + ")."}
		if f.Doc != "" {
			desc = append(desc, f.Doc+".")
		}
		if f.Key {
			desc = append(desc, "Key: identifies the object.")
		}
		if f.Default != nil {
			dv, _ := json.Marshal(f.Default)
			desc = append(desc, "swmgr's default: C("+string(dv)+").")
		}
		if f.Range != nil {
			desc = append(desc, fmt.Sprintf("From %d to %d.", f.Range.Min, f.Range.Max))
		}
		if f.Secret != model.Public {
			desc = append(desc, "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always).")
		}
		if f.CreateOnly {
			desc = append(desc, "Set at creation only.")
		}
		fmt.Fprintf(b, "%s  description:\n", indent)
		for _, d := range desc {
			fmt.Fprintf(b, "%s    - %s\n", indent, q(strings.TrimSuffix(d, "..")))
		}
		fmt.Fprintf(b, "%s  type: %s\n", indent, ansibleType[f.Type])
		switch f.Type {
		case model.StringList:
			fmt.Fprintf(b, "%s  elements: str\n", indent)
		case model.RecordList:
			fmt.Fprintf(b, "%s  elements: dict\n", indent)
		}
		if len(f.Enum) > 0 {
			fmt.Fprintf(b, "%s  choices:\n", indent)
			for _, c := range f.Enum {
				fmt.Fprintf(b, "%s    - %s\n", indent, q(c))
			}
		}
		if f.Secret != model.Public {
			fmt.Fprintf(b, "%s  no_log: true\n", indent)
		}
		if f.Type == model.Record || f.Type == model.RecordList {
			fmt.Fprintf(b, "%s  suboptions:\n", indent)
			optionDocs(b, f.Sub, indent+"    ", false)
		}
	}
}

func resourceModule(k *model.Kind) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("from __future__ import absolute_import, division, print_function\n__metaclass__ = type\n\n")
	fmt.Fprintf(&b, "DOCUMENTATION = r'''\n---\nmodule: %s\nshort_description: %s\ndescription:\n", ModuleName(k), q("Manage swmgr "+k.Name+" objects"))
	fmt.Fprintf(&b, "  - %s\n", q(strings.TrimSuffix(firstLine(k.Doc), ".")+"."))
	b.WriteString("  - \"One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing.\"\n")
	b.WriteString("  - \"Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff.\"\n")
	fmt.Fprintf(&b, "  - %s\n", q("Generated from swmgr's declaration of "+k.Name+": see docs/objects.md for every field."))
	b.WriteString("version_added: \"1.0.0\"\nauthor: swmgr developers\nextends_documentation_fragment:\n  - swmgr.switch.swmgr\n  - swmgr.switch.resource\noptions:\n")
	b.WriteString("  config:\n    description:\n")
	if k.Singleton {
		fmt.Fprintf(&b, "      - %s\n    type: dict\n    suboptions:\n", q("The settings of the one "+k.Name+"."))
	} else {
		fmt.Fprintf(&b, "      - %s\n    type: list\n    elements: dict\n    suboptions:\n", q("The "+k.Name+" objects, each named by its key fields."))
	}
	optionDocs(&b, k.Fields, "      ", true)
	b.WriteString("'''\n\n")
	example := exampleOf(k)
	fmt.Fprintf(&b, "EXAMPLES = r'''\n- name: %s\n  %s:\n    state: merged\n    config:%s\n'''\n\n", q("Make "+k.Name+" as given"), "swmgr.switch."+ModuleName(k), example)
	b.WriteString("RETURN = r'''\n# see the resource fragment: changed, revision, changes, candidate, gathered, rendered\n'''\n\n")
	b.WriteString("from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource\n\n\n")
	fmt.Fprintf(&b, "def main():\n    run_resource(%s)\n\n\nif __name__ == '__main__':\n    main()\n", q(k.Name))
	return b.Bytes()
}

// exampleOf is a config: value for the module's example: the kind's keys
// and required fields with a value of their form.
func exampleOf(k *model.Kind) string {
	var lines []string
	for _, f := range k.Fields {
		if !settable(f) || !(f.Key || f.Required) || f.Secret != model.Public {
			continue
		}
		lines = append(lines, Snake(f.Name)+": "+sampleValue(f))
	}
	if len(lines) == 0 {
		for _, f := range k.Fields {
			if settable(f) && !f.Key && f.Type != model.Record && f.Type != model.RecordList && f.Secret == model.Public {
				lines = append(lines, Snake(f.Name)+": "+sampleValue(f))
				break
			}
		}
	}
	if k.Singleton {
		return "\n      " + strings.Join(lines, "\n      ")
	}
	return "\n      - " + strings.Join(lines, "\n        ")
}

func sampleValue(f *model.Field) string {
	switch {
	case len(f.Enum) > 0:
		return q(f.Enum[0])
	case f.Type == model.Int:
		if f.Range != nil {
			return fmt.Sprint(f.Range.Min)
		}
		return "1"
	case f.Type == model.Bool:
		return "true"
	case f.Type == model.StringList:
		return "[" + q(sampleText(f)) + "]"
	}
	return q(sampleText(f))
}

func sampleText(f *model.Field) string {
	if f.Format != nil {
		return f.Format.Sample
	}
	return "example"
}

func saveModule(k *model.Kind) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("from __future__ import absolute_import, division, print_function\n__metaclass__ = type\n\n")
	fmt.Fprintf(&b, "DOCUMENTATION = r'''\n---\nmodule: swmgr_save\nshort_description: %s\ndescription:\n", q("Save swmgr's running configuration ("+k.Name+")"))
	fmt.Fprintf(&b, "  - %s\n", q(strings.TrimSuffix(firstLine(k.Doc), ".")+"."))
	b.WriteString("  - \"Check mode is the action's dry run. Generated from swmgr's declaration of the action.\"\n")
	b.WriteString("version_added: \"1.0.0\"\nauthor: swmgr developers\nextends_documentation_fragment:\n  - swmgr.switch.swmgr\noptions:\n")
	optionDocs(&b, k.Fields, "  ", false)
	b.WriteString("'''\n\nEXAMPLES = r'''\n- name: Save the running configuration as the startup configuration\n  swmgr.switch.swmgr_save:\n'''\n\n")
	b.WriteString("RETURN = r'''\nresult:\n  description: swmgr's answer to the action.\n  returned: always\n  type: dict\n'''\n\n")
	b.WriteString("from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_action\n\n\n")
	fmt.Fprintf(&b, "def main():\n    run_action(%s)\n\n\nif __name__ == '__main__':\n    main()\n", q(k.Name))
	return b.Bytes()
}

// Write writes files into dir, and removes the generated modules of kinds
// that no longer exist (files under plugins/modules that say they are
// generated but are not among files).
func Write(dir string, files map[string][]byte) error {
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	stale, err := Stale(dir, files)
	if err != nil {
		return err
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	return nil
}

// Stale lists the generated modules in dir that files no longer has.
func Stale(dir string, files map[string][]byte) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "plugins", "modules"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		name := "plugins/modules/" + e.Name()
		if _, ok := files[name]; ok || !strings.HasSuffix(name, ".py") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		if bytes.Contains(data, []byte("by `go run ./cmd/swmgr ansible`; do not edit")) {
			stale = append(stale, name)
		}
	}
	return stale, nil
}
