package sim

import (
	"context"
	"maps"
	"slices"

	"github.com/swmgr/swmgr/internal/model"
)

// relayServers lists DhcpRelayIntfServerState on the simulated switch:
// every server of every DhcpRelayIntf kept, with no request relayed (no
// client sends one).
func (s *Sim) relayServers(context.Context) ([]model.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	intfs := s.applied["DhcpRelayIntf"]
	var out []model.Object
	for _, ref := range slices.Sorted(maps.Keys(intfs)) {
		for _, ip := range intfs[ref].List("ServerIp") {
			out = append(out, model.Object{"IntfRef": ref, "ServerIp": ip, "Request": int64(0), "Responses": int64(0)})
		}
	}
	return out, nil
}
