package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/client"
)

// BenchmarkApply1000 times `apply` of 1,000 pending entries (VRFs staged
// in the candidate beforehand, untimed): one candidate commit.
func BenchmarkApply1000(b *testing.B) {
	srv, err := testserverStart()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	api, _ := client.New(srv.URL)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := NewSession(context.Background(), api, "x", Options{Out: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range []string{"enable", "config"} {
			s.Execute(l)
		}
		for j := 0; j < 1000; j++ {
			if err := s.Execute(fmt.Sprintf("vrf b%d-%d", i, j)); err != nil {
				b.Fatal(err)
			}
			s.Execute("exit")
		}
		b.StartTimer()
		if err := s.Execute("apply"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.HasPending() {
			b.Fatal("entries left after apply")
		}
		s.Execute("reset config default")
		s.Execute("apply")
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkRenderRun10k times rendering `show run` of 10,000 objects,
// without the REST reads (BenchmarkCLIShowRun10k in test/ has them).
func BenchmarkRenderRun10k(b *testing.B) {
	s := &Session{cat: newCatalog(mustBuiltin(), nil)}
	snap := snapshot{"Vrf": {}}
	for i := 0; i < 10000; i++ {
		o := map[string]any{"Vrf": fmt.Sprintf("v%d", i), "Name": ""}
		snap["Vrf"][fmt.Sprintf("Vrf=v%d", i)] = o
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if l := s.renderRun(snap, false); len(l) != 20000 || !strings.HasPrefix(l[1], "vrf v") {
			b.Fatalf("%d lines", len(l))
		}
	}
}
