package model

import (
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/apierr"
)

// TestNDPGlobalValues: FlexSwitch's defaults and every value the platform
// can take are accepted; a RetransmitInterval that would flood a link
// (below 100 ms, other than the factory 1 that stands for the kernel's
// own) and a value out of FlexSwitch's ranges are a 400 naming the field.
func TestNDPGlobalValues(t *testing.T) {
	k := Builtin().Lookup(Config, "NDPGlobal")
	const sdk = `{"Vrf":"default","ReachableTime":10,"RetransmitInterval":1,"RouterAdvertisementInterval":5}`
	for _, body := range []string{sdk,
		withField(sdk, "RetransmitInterval", `100`), withField(sdk, "RetransmitInterval", `3600000`),
		withField(sdk, "ReachableTime", `1`), withField(sdk, "ReachableTime", `60`),
		withField(sdk, "RouterAdvertisementInterval", `1`), withField(sdk, "RouterAdvertisementInterval", `1800`)} {
		if _, err := create(k, body); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	for _, b := range []struct{ field, value string }{
		{"RetransmitInterval", `2`}, {"RetransmitInterval", `50`}, {"RetransmitInterval", `99`},
		{"RetransmitInterval", `0`}, {"RetransmitInterval", `3600001`},
		{"ReachableTime", `0`}, {"ReachableTime", `61`},
		{"RouterAdvertisementInterval", `0`}, {"RouterAdvertisementInterval", `1801`},
	} {
		body := withField(sdk, b.field, b.value)
		_, err := create(k, body)
		ae, ok := err.(*apierr.Error)
		if !ok || ae.Status != 400 || ae.Code != apierr.CodeInvalidValue || !strings.Contains(ae.Message, b.field) {
			t.Errorf("%s: got %v, want a 400 naming %s", body, err, b.field)
		}
	}
}

// TestNDPTimers: a timer at its factory value stands for the platform's
// own (0 to apply, the platform's default in effect); any other is the
// platform's units (ms for the kernel, s for router advertisements).
func TestNDPTimers(t *testing.T) {
	for _, c := range []struct {
		o           Object
		want        NDPTimers
		reach, retr int64 // read back from the kernel (0: none)
		inEffect    [3]int64
	}{
		{Object{"ReachableTime": int64(10), "RetransmitInterval": int64(1), "RouterAdvertisementInterval": int64(5)}, NDPTimers{}, 0, 0, [3]int64{30000, 1000, 10}},
		{Object{"ReachableTime": int64(2), "RetransmitInterval": int64(500), "RouterAdvertisementInterval": int64(3)}, NDPTimers{ReachableMs: 120000, RetransMs: 500, RAInterval: 3}, 0, 0, [3]int64{120000, 500, 3}},
		{Object{"ReachableTime": int64(10), "RetransmitInterval": int64(1000), "RouterAdvertisementInterval": int64(5)}, NDPTimers{RetransMs: 1000}, 45000, 2000, [3]int64{45000, 2000, 10}},
	} {
		if got := NDPTimersOf(c.o); got != c.want {
			t.Errorf("NDPTimersOf(%v) = %+v, want %+v", c.o, got, c.want)
		}
		st := NDPInEffect(c.o, c.reach, c.retr)
		got := [3]int64{st.Int("ReachableTimeMsInEffect"), st.Int("RetransmitIntervalMsInEffect"), st.Int("RouterAdvertisementIntervalInEffect")}
		if got != c.inEffect {
			t.Errorf("NDPInEffect(%v, %d, %d) = %v, want %v", c.o, c.reach, c.retr, got, c.inEffect)
		}
	}
}
