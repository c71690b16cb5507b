# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgpv6_neighbor
short_description: "Manage swmgr BGPv6Neighbor objects"
description:
  - "A BGP peer over IPv6, keyed by VRF, address and IntfRef: by a global address (IntfRef \"\"), by a link-local address and its interface, or by interface alone (NeighborAddress \"\"). The session exchanges IPv6 unicast routes."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPv6Neighbor: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BGPv6Neighbor objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      vrf:
        description:
          - "API field C(Vrf)."
          - "VRF of the session (swmgr's addition to FlexSwitch's keys)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"default\")."
        type: str
      neighbor_address:
        description:
          - "API field C(NeighborAddress)."
          - "a global or link-local IPv6 address (a link-local one names its interface in IntfRef); \"\" for a neighbor by interface (IntfRef)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"\")."
        type: str
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the interface of a link-local NeighborAddress; with NeighborAddress \"\", a session with whatever router answers on that interface (its link-local address, found by neighbour discovery); \"\" (the default) for a neighbor by global address. The interface needs an IPv6Intf."
          - "Key: identifies the object."
          - "swmgr's default: C(\"\")."
        type: str
      peer_as:
        description:
          - "API field C(PeerAS)."
          - "\"\" takes the PeerGroup's."
        type: str
      local_as:
        description:
          - "API field C(LocalAS)."
          - "\"\" uses BGPGlobal ASNum."
        type: str
      description:
        description:
          - "API field C(Description)."
        type: str
      disabled:
        description:
          - "API field C(Disabled)."
        type: bool
      peer_group:
        description:
          - "API field C(PeerGroup)."
          - "the BGPv6PeerGroup whose settings the neighbor takes where it sets none."
        type: str
      update_source:
        description:
          - "API field C(UpdateSource)."
          - "source of the session: an IPv6 address or an interface name (Loopback1); \"\" lets the switch choose."
        type: str
      next_hop_self:
        description:
          - "API field C(NextHopSelf)."
        type: bool
      route_reflector_cluster_id:
        description:
          - "API field C(RouteReflectorClusterId)."
          - "0: the router id; one per BGP instance."
          - "From 0 to 4294967295."
        type: int
      route_reflector_client:
        description:
          - "API field C(RouteReflectorClient)."
        type: bool
      multi_hop_enable:
        description:
          - "API field C(MultiHopEnable)."
        type: bool
      multi_hop_ttl:
        description:
          - "API field C(MultiHopTTL)."
          - "0 with MultiHopEnable: 255."
          - "From 0 to 255."
        type: int
      connect_retry_time:
        description:
          - "API field C(ConnectRetryTime)."
          - "seconds; 0 uses the default (120)."
          - "From 0 to 65535."
        type: int
      hold_time:
        description:
          - "API field C(HoldTime)."
          - "seconds; 0 uses the default (180)."
          - "From 0 to 65535."
        type: int
      keepalive_time:
        description:
          - "API field C(KeepaliveTime)."
          - "seconds; 0 uses the default (60)."
          - "From 0 to 21845."
        type: int
      add_paths_rx:
        description:
          - "API field C(AddPathsRx)."
        type: bool
      add_paths_max_tx:
        description:
          - "API field C(AddPathsMaxTx)."
          - "From 0 to 255."
        type: int
      bfd_enable:
        description:
          - "API field C(BfdEnable)."
        type: bool
      bfd_session_param:
        description:
          - "API field C(BfdSessionParam)."
          - "the BfdSessionParam of the neighbor's BFD session (with BfdEnable)."
          - "swmgr's default: C(\"default\")."
        type: str
      max_prefixes:
        description:
          - "API field C(MaxPrefixes)."
          - "0: no limit."
          - "From 0 to 4294967295."
        type: int
      max_prefixes_threshold_pct:
        description:
          - "API field C(MaxPrefixesThresholdPct)."
          - "swmgr's default: C(80)."
          - "From 0 to 100."
        type: int
      max_prefixes_disconnect:
        description:
          - "API field C(MaxPrefixesDisconnect)."
        type: bool
      max_prefixes_restart_timer:
        description:
          - "API field C(MaxPrefixesRestartTimer)."
          - "seconds."
          - "From 0 to 255."
        type: int
      adj_rib_in_filter:
        description:
          - "API field C(AdjRIBInFilter)."
          - "the PolicyDefinition the routes received pass; \"\": every route."
        type: str
      adj_rib_out_filter:
        description:
          - "API field C(AdjRIBOutFilter)."
          - "the PolicyDefinition the routes sent pass; \"\": every route."
        type: str
'''

EXAMPLES = r'''
- name: "Make BGPv6Neighbor as given"
  swmgr.switch.swmgr_bgpv6_neighbor:
    state: merged
    config:
      - vrf: "example"
        neighbor_address: "2001:db8::1"
        intf_ref: "fpPort1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPv6Neighbor")


if __name__ == '__main__':
    main()
