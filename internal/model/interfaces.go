package model

import (
	"strings"
)

// Interface declares a config kind whose objects are interfaces of the
// switch (Kind.Interface): the kinds a field of FormatIntfRef may name
// (IPv4Intf's IntfRef, a static route's next-hop interface). The names of
// the registry's interface kinds are all the format accepts, its Doc and
// its error message list them, a reference of the format names the object
// the name maps to, and each dataplane resolves a name to its own device
// per interface kind (backend.Interfaces). Adding an interface kind (a
// LAG) is its declaration here and its resolution in each dataplane.
type Interface struct {
	// Prefix starts every name of the kind, in any case ("fpPort",
	// "vlan"): a name with the prefix is of this kind or of none. ""
	// for the one kind whose names are free (LogicalIntf): it takes a
	// name no other kind's prefix claims, and is tried last.
	Prefix string
	// Noun names an interface of the kind in a message: "a port".
	Noun string
	// Like is the kind's names in an error message, by example: "a port
	// like fpPort1 or fpPort1s2".
	Like string
	// Form is how the names look, for the docs: "fpPort<N>, fpPort<N>s<M>".
	Form string
	// Key returns the store key of the object a name of the kind names.
	// ok is false when name is not such a name; why then says what is
	// wrong with a name of the kind's form that is out of its bounds
	// ("a VLAN interface is vlan<VlanId> with VlanId 1..4094"), or is "".
	Key func(name string) (key string, ok bool, why string)
	// Member says an interface of the kind switches frames as a port does
	// (a port, a LAG): a VLAN's member list and a mirror session's ports
	// (FormatSwitchPort) take its names.
	Member bool

	set *interfaceSet // the registry's interface kinds, bound by NewRegistry
}

// interfaceSet is a registry's interface kinds: those with a Prefix in
// declaration order, then the one with free names.
type interfaceSet struct {
	kinds []*Kind
}

// newInterfaceSet gathers the interface kinds of kinds and checks their
// declarations.
func newInterfaceSet(kinds []*Kind) (*interfaceSet, error) {
	s := &interfaceSet{}
	var free *Kind
	for _, k := range kinds {
		in := k.Interface
		if in == nil {
			continue
		}
		switch {
		case k.Class != Config:
			return nil, errorf("%s: only a config kind is an interface kind", k.Name)
		case in.Noun == "" || in.Like == "" || in.Form == "" || in.Key == nil:
			return nil, errorf("%s: an interface kind declares Noun, Like, Form and Key", k.Name)
		case in.Prefix == "" && free != nil:
			return nil, errorf("%s: %s already takes the free interface names (no Prefix)", k.Name, free.Name)
		case in.Prefix == "":
			free = k
			continue
		}
		for _, o := range s.kinds {
			a, b := strings.ToLower(in.Prefix), strings.ToLower(o.Interface.Prefix)
			if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
				return nil, errorf("%s: interface prefix %q overlaps %s's %q", k.Name, in.Prefix, o.Name, o.Interface.Prefix)
			}
		}
		s.kinds = append(s.kinds, k)
	}
	if free != nil {
		s.kinds = append(s.kinds, free)
	}
	for _, k := range s.kinds {
		k.Interface.set = s
	}
	return s, nil
}

// resolve returns the interface kind and store key name names; when it
// names none, kind is nil and why says what is wrong with a name of a
// kind's form, or is "".
func (s *interfaceSet) resolve(name string) (kind *Kind, key, why string) {
	lower := strings.ToLower(name)
	for _, k := range s.kinds {
		in := k.Interface
		if in.Prefix != "" && !strings.HasPrefix(lower, strings.ToLower(in.Prefix)) {
			continue
		}
		key, ok, why := in.Key(name)
		if !ok {
			return nil, "", why
		}
		return k, key, ""
	}
	return nil, "", ""
}

// claimedBy returns the Noun of the interface kind other than self whose
// prefix name has, or "".
func (s *interfaceSet) claimedBy(self *Interface, name string) string {
	lower := strings.ToLower(name)
	for _, k := range s.kinds {
		if in := k.Interface; in != self && in.Prefix != "" && strings.HasPrefix(lower, strings.ToLower(in.Prefix)) {
			return in.Noun
		}
	}
	return ""
}

// each returns what pick says of every interface kind, in order.
func (s *interfaceSet) each(pick func(*Interface) string) []string {
	out := make([]string, len(s.kinds))
	for i, k := range s.kinds {
		out[i] = pick(k.Interface)
	}
	return out
}

// OthersTaken returns the Noun of the interface kind other than in whose
// names include name ("a port" for a LogicalIntf named fpPort1), or "";
// with the Nouns of every other kind, for the message of a refused name.
func (in *Interface) OthersTaken(name string) (by string, others []string) {
	if in.set == nil {
		return "", nil
	}
	for _, k := range in.set.kinds {
		if k.Interface != in {
			others = append(others, k.Interface.Noun)
		}
	}
	return in.set.claimedBy(in, name), others
}

// Interfaces returns the registry's interface kinds: those whose names
// have a prefix in declaration order, then the one whose names are free.
func (r *Registry) Interfaces() []*Kind { return r.interfaces.kinds }

// InterfaceOf returns the interface kind and the store key of the object
// an interface name names (fpPort1: Port "fpPort1"; vlan10: Vlan "10"),
// or ok false when name is no interface's name.
func (r *Registry) InterfaceOf(name string) (kind *Kind, key string, ok bool) {
	k, key, _ := r.interfaces.resolve(name)
	return k, key, k != nil
}

// bindInterfaceFormat makes the interface format declared of one registry:
// the names of its interface kinds.
func bindInterfaceFormat(declared *Format, r *Registry) *Format {
	s := r.interfaces
	f := *declared
	if len(s.kinds) == 0 {
		return &f // incomplete: NewRegistry says so
	}
	f.Doc = joinWords(s.each(func(in *Interface) string { return in.Form }), " or ")
	general := "an interface: " + joinWords(s.each(func(in *Interface) string { return in.Like }), ", or ")
	f.Check = func(name string) string {
		k, _, why := s.resolve(name)
		switch {
		case k != nil:
			return ""
		case why != "":
			return "an interface: " + why
		}
		return general
	}
	f.Resolve = func(name string) (kind, key string) {
		if k, key, _ := s.resolve(name); k != nil {
			return k.Name, key
		}
		return s.kinds[len(s.kinds)-1].Name, name // refused by Check before any reference is resolved
	}
	return &f
}

// bindSwitchPortFormat makes the switch-port format of one registry: the
// names of its interface kinds that are Member (a port, a LAG).
func bindSwitchPortFormat(declared *Format, r *Registry) *Format {
	f := *declared
	var members []*Kind
	for _, k := range r.interfaces.kinds {
		if k.Interface.Member {
			members = append(members, k)
		}
	}
	if len(members) == 0 {
		return &f // incomplete: NewRegistry says so
	}
	pick := func(each func(*Interface) string) []string {
		out := make([]string, len(members))
		for i, k := range members {
			out[i] = each(k.Interface)
		}
		return out
	}
	f.Doc = joinWords(pick(func(in *Interface) string { return in.Form }), " or ")
	general := joinWords(pick(func(in *Interface) string { return in.Like }), ", or ")
	f.Check = func(name string) string {
		k, _, why := r.interfaces.resolve(name)
		switch {
		case k != nil && k.Interface.Member:
			return ""
		case k == nil && why != "":
			return why
		}
		return general
	}
	f.Resolve = func(name string) (kind, key string) {
		if k, key, _ := r.interfaces.resolve(name); k != nil && k.Interface.Member {
			return k.Name, key
		}
		return members[0].Name, name // refused by Check before any reference is resolved
	}
	return &f
}

// joinWords joins words with ", " and last before the final one:
// "a, b or c".
func joinWords(words []string, last string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	case 2:
		return words[0] + strings.TrimPrefix(last, ",") + words[1]
	}
	return strings.Join(words[:len(words)-1], ", ") + last + words[len(words)-1]
}
