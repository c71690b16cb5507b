# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

"""What swmgr's object model declares, as the collection's modules read it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

# The model, generated from swmgr's declaration of every kind.
MODEL = json.loads(r'''{
 "actions": {
  "SaveConfig": [
   {
    "option": "nonce",
    "name": "Nonce",
    "type": "str",
    "settable": true
   },
   {
    "option": "passphrase",
    "name": "Passphrase",
    "type": "str",
    "secret": true,
    "transient": true,
    "settable": true
   },
   {
    "option": "dst_file_uri",
    "name": "DstFileURI",
    "type": "str",
    "settable": true
   },
   {
    "option": "file_name",
    "name": "FileName",
    "type": "str",
    "settable": true
   },
   {
    "option": "timeout",
    "name": "Timeout",
    "type": "int",
    "settable": true
   },
   {
    "option": "retry_count",
    "name": "RetryCount",
    "type": "int",
    "settable": true
   },
   {
    "option": "timestamp",
    "name": "Timestamp",
    "type": "str",
    "choices": [
     "append",
     "prepend",
     "disabled"
    ],
    "settable": true
   }
  ]
 },
 "kinds": {
  "AAAGlobal": {
   "module": "swmgr_aaa_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "ProfileName"
   ],
   "fields": [
    {
     "option": "profile_name",
     "name": "ProfileName",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "auth_order",
     "name": "AuthOrder",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "accounting",
     "name": "Accounting",
     "type": "bool",
     "settable": true
    },
    {
     "option": "cache_seconds",
     "name": "CacheSeconds",
     "type": "int",
     "settable": true
    }
   ]
  },
  "Acl": {
   "module": "swmgr_acl",
   "singleton": false,
   "creatable": true,
   "keys": [
    "AclName",
    "Direction"
   ],
   "fields": [
    {
     "option": "acl_name",
     "name": "AclName",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "direction",
     "name": "Direction",
     "type": "str",
     "choices": [
      "IN",
      "OUT"
     ],
     "key": true,
     "settable": true
    },
    {
     "option": "acl_type",
     "name": "AclType",
     "type": "str",
     "choices": [
      "IP",
      "IPv6",
      "MAC"
     ],
     "settable": true
    },
    {
     "option": "intf_list",
     "name": "IntfList",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "rule_name_list",
     "name": "RuleNameList",
     "type": "list",
     "elements": "str",
     "settable": true
    }
   ]
  },
  "AclRule": {
   "module": "swmgr_acl_rule",
   "singleton": false,
   "creatable": true,
   "keys": [
    "RuleName"
   ],
   "fields": [
    {
     "option": "rule_name",
     "name": "RuleName",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "source_mac",
     "name": "SourceMac",
     "type": "str",
     "settable": true
    },
    {
     "option": "dest_mac",
     "name": "DestMac",
     "type": "str",
     "settable": true
    },
    {
     "option": "source_ip",
     "name": "SourceIp",
     "type": "str",
     "settable": true
    },
    {
     "option": "dest_ip",
     "name": "DestIp",
     "type": "str",
     "settable": true
    },
    {
     "option": "source_mask",
     "name": "SourceMask",
     "type": "str",
     "settable": true
    },
    {
     "option": "dest_mask",
     "name": "DestMask",
     "type": "str",
     "settable": true
    },
    {
     "option": "proto",
     "name": "Proto",
     "type": "str",
     "choices": [
      "",
      "TCP",
      "UDP",
      "ICMP",
      "ICMPv6"
     ],
     "settable": true
    },
    {
     "option": "src_port",
     "name": "SrcPort",
     "type": "str",
     "settable": true
    },
    {
     "option": "dst_port",
     "name": "DstPort",
     "type": "str",
     "settable": true
    },
    {
     "option": "l4_src_port",
     "name": "L4SrcPort",
     "type": "int",
     "settable": true
    },
    {
     "option": "l4_dst_port",
     "name": "L4DstPort",
     "type": "int",
     "settable": true
    },
    {
     "option": "l4_port_match",
     "name": "L4PortMatch",
     "type": "str",
     "choices": [
      "NA",
      "EQ",
      "NEQ",
      "LT",
      "GT",
      "RANGE"
     ],
     "settable": true
    },
    {
     "option": "l4_min_port",
     "name": "L4MinPort",
     "type": "int",
     "settable": true
    },
    {
     "option": "l4_max_port",
     "name": "L4MaxPort",
     "type": "int",
     "settable": true
    },
    {
     "option": "dscp",
     "name": "Dscp",
     "type": "int",
     "settable": true
    },
    {
     "option": "action",
     "name": "Action",
     "type": "str",
     "choices": [
      "Allow",
      "Deny"
     ],
     "settable": true
    },
    {
     "option": "log",
     "name": "Log",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BGPGlobal": {
   "module": "swmgr_bgp_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "as_num",
     "name": "ASNum",
     "type": "str",
     "settable": true
    },
    {
     "option": "router_id",
     "name": "RouterId",
     "type": "str",
     "settable": true
    },
    {
     "option": "disabled",
     "name": "Disabled",
     "type": "bool",
     "settable": true
    },
    {
     "option": "use_multiple_paths",
     "name": "UseMultiplePaths",
     "type": "bool",
     "settable": true
    },
    {
     "option": "ebgp_max_paths",
     "name": "EBGPMaxPaths",
     "type": "int",
     "settable": true
    },
    {
     "option": "ebgp_allow_multiple_as",
     "name": "EBGPAllowMultipleAS",
     "type": "bool",
     "settable": true
    },
    {
     "option": "ibgp_max_paths",
     "name": "IBGPMaxPaths",
     "type": "int",
     "settable": true
    },
    {
     "option": "redistribution",
     "name": "Redistribution",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "sources",
       "name": "Sources",
       "type": "str",
       "settable": true
      },
      {
       "option": "policy",
       "name": "Policy",
       "type": "str",
       "settable": true
      }
     ]
    }
   ]
  },
  "BGPL2vpnEvpn": {
   "module": "swmgr_bgpl2vpn_evpn",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "advertise_all_vni",
     "name": "AdvertiseAllVni",
     "type": "bool",
     "settable": true
    },
    {
     "option": "advertise_default_gw",
     "name": "AdvertiseDefaultGw",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BGPL2vpnEvpnNeighbor": {
   "module": "swmgr_bgpl2vpn_evpn_neighbor",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Neighbor"
   ],
   "fields": [
    {
     "option": "neighbor",
     "name": "Neighbor",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "route_reflector_client",
     "name": "RouteReflectorClient",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BGPVrf": {
   "module": "swmgr_bgp_vrf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "use_multiple_paths",
     "name": "UseMultiplePaths",
     "type": "bool",
     "settable": true
    },
    {
     "option": "ebgp_max_paths",
     "name": "EBGPMaxPaths",
     "type": "int",
     "settable": true
    },
    {
     "option": "ibgp_max_paths",
     "name": "IBGPMaxPaths",
     "type": "int",
     "settable": true
    },
    {
     "option": "redistribution",
     "name": "Redistribution",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "sources",
       "name": "Sources",
       "type": "str",
       "settable": true
      },
      {
       "option": "policy",
       "name": "Policy",
       "type": "str",
       "settable": true
      }
     ]
    }
   ]
  },
  "BGPv4Aggregate": {
   "module": "swmgr_bgpv4_aggregate",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IpPrefix"
   ],
   "fields": [
    {
     "option": "ip_prefix",
     "name": "IpPrefix",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "send_summary_only",
     "name": "SendSummaryOnly",
     "type": "bool",
     "settable": true
    },
    {
     "option": "generate_as_set",
     "name": "GenerateASSet",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BGPv4Neighbor": {
   "module": "swmgr_bgpv4_neighbor",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Vrf",
    "NeighborAddress",
    "IntfRef"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "neighbor_address",
     "name": "NeighborAddress",
     "type": "str",
     "key": true,
     "settable": true,
     "default": ""
    },
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true,
     "default": ""
    },
    {
     "option": "peer_as",
     "name": "PeerAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "local_as",
     "name": "LocalAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "disabled",
     "name": "Disabled",
     "type": "bool",
     "settable": true
    },
    {
     "option": "peer_group",
     "name": "PeerGroup",
     "type": "str",
     "settable": true
    },
    {
     "option": "update_source",
     "name": "UpdateSource",
     "type": "str",
     "settable": true
    },
    {
     "option": "auth_password",
     "name": "AuthPassword",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "next_hop_self",
     "name": "NextHopSelf",
     "type": "bool",
     "settable": true
    },
    {
     "option": "route_reflector_cluster_id",
     "name": "RouteReflectorClusterId",
     "type": "int",
     "settable": true
    },
    {
     "option": "route_reflector_client",
     "name": "RouteReflectorClient",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_enable",
     "name": "MultiHopEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_ttl",
     "name": "MultiHopTTL",
     "type": "int",
     "settable": true
    },
    {
     "option": "connect_retry_time",
     "name": "ConnectRetryTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "hold_time",
     "name": "HoldTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "keepalive_time",
     "name": "KeepaliveTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "add_paths_rx",
     "name": "AddPathsRx",
     "type": "bool",
     "settable": true
    },
    {
     "option": "add_paths_max_tx",
     "name": "AddPathsMaxTx",
     "type": "int",
     "settable": true
    },
    {
     "option": "bfd_enable",
     "name": "BfdEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "bfd_session_param",
     "name": "BfdSessionParam",
     "type": "str",
     "settable": true
    },
    {
     "option": "max_prefixes",
     "name": "MaxPrefixes",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_threshold_pct",
     "name": "MaxPrefixesThresholdPct",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_disconnect",
     "name": "MaxPrefixesDisconnect",
     "type": "bool",
     "settable": true
    },
    {
     "option": "max_prefixes_restart_timer",
     "name": "MaxPrefixesRestartTimer",
     "type": "int",
     "settable": true
    },
    {
     "option": "adj_rib_in_filter",
     "name": "AdjRIBInFilter",
     "type": "str",
     "settable": true
    },
    {
     "option": "adj_rib_out_filter",
     "name": "AdjRIBOutFilter",
     "type": "str",
     "settable": true
    }
   ]
  },
  "BGPv4PeerGroup": {
   "module": "swmgr_bgpv4_peer_group",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "peer_as",
     "name": "PeerAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "local_as",
     "name": "LocalAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "update_source",
     "name": "UpdateSource",
     "type": "str",
     "settable": true
    },
    {
     "option": "auth_password",
     "name": "AuthPassword",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "next_hop_self",
     "name": "NextHopSelf",
     "type": "bool",
     "settable": true
    },
    {
     "option": "route_reflector_cluster_id",
     "name": "RouteReflectorClusterId",
     "type": "int",
     "settable": true
    },
    {
     "option": "route_reflector_client",
     "name": "RouteReflectorClient",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_enable",
     "name": "MultiHopEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_ttl",
     "name": "MultiHopTTL",
     "type": "int",
     "settable": true
    },
    {
     "option": "connect_retry_time",
     "name": "ConnectRetryTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "hold_time",
     "name": "HoldTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "keepalive_time",
     "name": "KeepaliveTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "add_paths_rx",
     "name": "AddPathsRx",
     "type": "bool",
     "settable": true
    },
    {
     "option": "add_paths_max_tx",
     "name": "AddPathsMaxTx",
     "type": "int",
     "settable": true
    },
    {
     "option": "bfd_enable",
     "name": "BfdEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "bfd_session_param",
     "name": "BfdSessionParam",
     "type": "str",
     "settable": true
    },
    {
     "option": "max_prefixes",
     "name": "MaxPrefixes",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_threshold_pct",
     "name": "MaxPrefixesThresholdPct",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_disconnect",
     "name": "MaxPrefixesDisconnect",
     "type": "bool",
     "settable": true
    },
    {
     "option": "max_prefixes_restart_timer",
     "name": "MaxPrefixesRestartTimer",
     "type": "int",
     "settable": true
    },
    {
     "option": "adj_rib_in_filter",
     "name": "AdjRIBInFilter",
     "type": "str",
     "settable": true
    },
    {
     "option": "adj_rib_out_filter",
     "name": "AdjRIBOutFilter",
     "type": "str",
     "settable": true
    }
   ]
  },
  "BGPv6Aggregate": {
   "module": "swmgr_bgpv6_aggregate",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IpPrefix"
   ],
   "fields": [
    {
     "option": "ip_prefix",
     "name": "IpPrefix",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "send_summary_only",
     "name": "SendSummaryOnly",
     "type": "bool",
     "settable": true
    },
    {
     "option": "generate_as_set",
     "name": "GenerateASSet",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BGPv6Neighbor": {
   "module": "swmgr_bgpv6_neighbor",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Vrf",
    "NeighborAddress",
    "IntfRef"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "neighbor_address",
     "name": "NeighborAddress",
     "type": "str",
     "key": true,
     "settable": true,
     "default": ""
    },
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true,
     "default": ""
    },
    {
     "option": "peer_as",
     "name": "PeerAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "local_as",
     "name": "LocalAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "disabled",
     "name": "Disabled",
     "type": "bool",
     "settable": true
    },
    {
     "option": "peer_group",
     "name": "PeerGroup",
     "type": "str",
     "settable": true
    },
    {
     "option": "update_source",
     "name": "UpdateSource",
     "type": "str",
     "settable": true
    },
    {
     "option": "next_hop_self",
     "name": "NextHopSelf",
     "type": "bool",
     "settable": true
    },
    {
     "option": "route_reflector_cluster_id",
     "name": "RouteReflectorClusterId",
     "type": "int",
     "settable": true
    },
    {
     "option": "route_reflector_client",
     "name": "RouteReflectorClient",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_enable",
     "name": "MultiHopEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_ttl",
     "name": "MultiHopTTL",
     "type": "int",
     "settable": true
    },
    {
     "option": "connect_retry_time",
     "name": "ConnectRetryTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "hold_time",
     "name": "HoldTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "keepalive_time",
     "name": "KeepaliveTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "add_paths_rx",
     "name": "AddPathsRx",
     "type": "bool",
     "settable": true
    },
    {
     "option": "add_paths_max_tx",
     "name": "AddPathsMaxTx",
     "type": "int",
     "settable": true
    },
    {
     "option": "bfd_enable",
     "name": "BfdEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "bfd_session_param",
     "name": "BfdSessionParam",
     "type": "str",
     "settable": true
    },
    {
     "option": "max_prefixes",
     "name": "MaxPrefixes",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_threshold_pct",
     "name": "MaxPrefixesThresholdPct",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_disconnect",
     "name": "MaxPrefixesDisconnect",
     "type": "bool",
     "settable": true
    },
    {
     "option": "max_prefixes_restart_timer",
     "name": "MaxPrefixesRestartTimer",
     "type": "int",
     "settable": true
    },
    {
     "option": "adj_rib_in_filter",
     "name": "AdjRIBInFilter",
     "type": "str",
     "settable": true
    },
    {
     "option": "adj_rib_out_filter",
     "name": "AdjRIBOutFilter",
     "type": "str",
     "settable": true
    }
   ]
  },
  "BGPv6PeerGroup": {
   "module": "swmgr_bgpv6_peer_group",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "peer_as",
     "name": "PeerAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "local_as",
     "name": "LocalAS",
     "type": "str",
     "settable": true
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "update_source",
     "name": "UpdateSource",
     "type": "str",
     "settable": true
    },
    {
     "option": "next_hop_self",
     "name": "NextHopSelf",
     "type": "bool",
     "settable": true
    },
    {
     "option": "route_reflector_cluster_id",
     "name": "RouteReflectorClusterId",
     "type": "int",
     "settable": true
    },
    {
     "option": "route_reflector_client",
     "name": "RouteReflectorClient",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_enable",
     "name": "MultiHopEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "multi_hop_ttl",
     "name": "MultiHopTTL",
     "type": "int",
     "settable": true
    },
    {
     "option": "connect_retry_time",
     "name": "ConnectRetryTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "hold_time",
     "name": "HoldTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "keepalive_time",
     "name": "KeepaliveTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "add_paths_rx",
     "name": "AddPathsRx",
     "type": "bool",
     "settable": true
    },
    {
     "option": "add_paths_max_tx",
     "name": "AddPathsMaxTx",
     "type": "int",
     "settable": true
    },
    {
     "option": "bfd_enable",
     "name": "BfdEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "bfd_session_param",
     "name": "BfdSessionParam",
     "type": "str",
     "settable": true
    },
    {
     "option": "max_prefixes",
     "name": "MaxPrefixes",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_threshold_pct",
     "name": "MaxPrefixesThresholdPct",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_prefixes_disconnect",
     "name": "MaxPrefixesDisconnect",
     "type": "bool",
     "settable": true
    },
    {
     "option": "max_prefixes_restart_timer",
     "name": "MaxPrefixesRestartTimer",
     "type": "int",
     "settable": true
    },
    {
     "option": "adj_rib_in_filter",
     "name": "AdjRIBInFilter",
     "type": "str",
     "settable": true
    },
    {
     "option": "adj_rib_out_filter",
     "name": "AdjRIBOutFilter",
     "type": "str",
     "settable": true
    }
   ]
  },
  "BfdGlobal": {
   "module": "swmgr_bfd_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "BfdSession": {
   "module": "swmgr_bfd_session",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IpAddr"
   ],
   "fields": [
    {
     "option": "ip_addr",
     "name": "IpAddr",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "interface",
     "name": "Interface",
     "type": "str",
     "settable": true
    },
    {
     "option": "owner",
     "name": "Owner",
     "type": "str",
     "choices": [
      "user"
     ],
     "settable": true
    },
    {
     "option": "per_link",
     "name": "PerLink",
     "type": "bool",
     "settable": false
    },
    {
     "option": "param_name",
     "name": "ParamName",
     "type": "str",
     "settable": true
    }
   ]
  },
  "BfdSessionParam": {
   "module": "swmgr_bfd_session_param",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "required_min_rx_interval",
     "name": "RequiredMinRxInterval",
     "type": "int",
     "settable": true
    },
    {
     "option": "desired_min_tx_interval",
     "name": "DesiredMinTxInterval",
     "type": "int",
     "settable": true
    },
    {
     "option": "local_multiplier",
     "name": "LocalMultiplier",
     "type": "int",
     "settable": true
    },
    {
     "option": "required_min_echo_rx_interval",
     "name": "RequiredMinEchoRxInterval",
     "type": "int",
     "settable": true
    },
    {
     "option": "demand_enabled",
     "name": "DemandEnabled",
     "type": "bool",
     "settable": false
    },
    {
     "option": "authentication_enabled",
     "name": "AuthenticationEnabled",
     "type": "bool",
     "settable": false
    },
    {
     "option": "auth_type",
     "name": "AuthType",
     "type": "str",
     "choices": [
      "simple",
      "keyedmd5",
      "metmd5",
      "keyedsha1",
      "metsha1"
     ],
     "settable": true
    },
    {
     "option": "auth_key_id",
     "name": "AuthKeyId",
     "type": "int",
     "settable": true
    },
    {
     "option": "auth_data",
     "name": "AuthData",
     "type": "str",
     "secret": true,
     "settable": true
    }
   ]
  },
  "ConfigArchiveServer": {
   "module": "swmgr_config_archive_server",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IpAddr"
   ],
   "fields": [
    {
     "option": "ip_addr",
     "name": "IpAddr",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "port",
     "name": "Port",
     "type": "int",
     "settable": true
    },
    {
     "option": "username",
     "name": "Username",
     "type": "str",
     "settable": true
    },
    {
     "option": "password",
     "name": "Password",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "dst_file",
     "name": "DstFile",
     "type": "str",
     "settable": true
    },
    {
     "option": "interval",
     "name": "Interval",
     "type": "int",
     "settable": true
    },
    {
     "option": "nonce",
     "name": "Nonce",
     "type": "str",
     "settable": true
    },
    {
     "option": "passphrase",
     "name": "Passphrase",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "on_change",
     "name": "OnChange",
     "type": "bool",
     "settable": true
    },
    {
     "option": "retry_count",
     "name": "RetryCount",
     "type": "int",
     "settable": true
    },
    {
     "option": "timeout",
     "name": "Timeout",
     "type": "int",
     "settable": true
    },
    {
     "option": "timestamp",
     "name": "Timestamp",
     "type": "str",
     "choices": [
      "append",
      "prepend",
      "disabled"
     ],
     "settable": true
    }
   ]
  },
  "ControlPlaneAclRule": {
   "module": "swmgr_control_plane_acl_rule",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "sequence",
     "name": "Sequence",
     "type": "int",
     "settable": true
    },
    {
     "option": "service",
     "name": "Service",
     "type": "str",
     "choices": [
      "HTTPS",
      "GNMI",
      "SSH"
     ],
     "settable": true
    },
    {
     "option": "source_ip",
     "name": "SourceIp",
     "type": "str",
     "settable": true
    },
    {
     "option": "source_mask",
     "name": "SourceMask",
     "type": "str",
     "settable": true
    },
    {
     "option": "action",
     "name": "Action",
     "type": "str",
     "choices": [
      "Allow",
      "Deny"
     ],
     "settable": true
    }
   ]
  },
  "DNSGlobal": {
   "module": "swmgr_dns_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "domain",
     "name": "Domain",
     "type": "str",
     "settable": true
    }
   ]
  },
  "DNSServer": {
   "module": "swmgr_dns_server",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IPAddr"
   ],
   "fields": [
    {
     "option": "ip_addr",
     "name": "IPAddr",
     "type": "str",
     "key": true,
     "settable": true
    }
   ]
  },
  "DhcpRelayGlobal": {
   "module": "swmgr_dhcp_relay_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "hop_count_limit",
     "name": "HopCountLimit",
     "type": "int",
     "settable": true
    }
   ]
  },
  "DhcpRelayIntf": {
   "module": "swmgr_dhcp_relay_intf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "server_ip",
     "name": "ServerIp",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "settable": true
    }
   ]
  },
  "EvpnL3Vni": {
   "module": "swmgr_evpn_l3_vni",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "vni",
     "name": "Vni",
     "type": "int",
     "settable": true
    },
    {
     "option": "vlan_id",
     "name": "VlanId",
     "type": "int",
     "settable": true
    },
    {
     "option": "advertise_ipv4_unicast",
     "name": "AdvertiseIPv4Unicast",
     "type": "bool",
     "settable": true
    },
    {
     "option": "route_distinguisher",
     "name": "RouteDistinguisher",
     "type": "str",
     "settable": true
    },
    {
     "option": "import_route_targets",
     "name": "ImportRouteTargets",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "export_route_targets",
     "name": "ExportRouteTargets",
     "type": "list",
     "elements": "str",
     "settable": true
    }
   ]
  },
  "IPv4Intf": {
   "module": "swmgr_ipv4_intf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "ip_addr",
     "name": "IpAddr",
     "type": "str",
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "settable": true
    },
    {
     "option": "allow_overlap",
     "name": "AllowOverlap",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "IPv4Route": {
   "module": "swmgr_ipv4_route",
   "singleton": false,
   "creatable": true,
   "keys": [
    "DestinationNw",
    "NetworkMask"
   ],
   "fields": [
    {
     "option": "destination_nw",
     "name": "DestinationNw",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "network_mask",
     "name": "NetworkMask",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "protocol",
     "name": "Protocol",
     "type": "str",
     "choices": [
      "STATIC"
     ],
     "settable": true
    },
    {
     "option": "cost",
     "name": "Cost",
     "type": "int",
     "settable": true
    },
    {
     "option": "null_route",
     "name": "NullRoute",
     "type": "bool",
     "settable": true
    },
    {
     "option": "next_hop",
     "name": "NextHop",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "next_hop_ip",
       "name": "NextHopIp",
       "type": "str",
       "settable": true
      },
      {
       "option": "next_hop_int_ref",
       "name": "NextHopIntRef",
       "type": "str",
       "settable": true
      },
      {
       "option": "weight",
       "name": "Weight",
       "type": "int",
       "settable": true
      }
     ]
    }
   ]
  },
  "IPv4Unnumbered": {
   "module": "swmgr_ipv4_unnumbered",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "interface",
     "name": "Interface",
     "type": "str",
     "settable": true
    },
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "settable": true
    }
   ]
  },
  "IPv6Intf": {
   "module": "swmgr_ipv6_intf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "ip_addr",
     "name": "IpAddr",
     "type": "str",
     "settable": true
    },
    {
     "option": "link_ip",
     "name": "LinkIp",
     "type": "bool",
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    }
   ]
  },
  "IPv6Route": {
   "module": "swmgr_ipv6_route",
   "singleton": false,
   "creatable": true,
   "keys": [
    "DestinationNw",
    "NetworkMask"
   ],
   "fields": [
    {
     "option": "destination_nw",
     "name": "DestinationNw",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "network_mask",
     "name": "NetworkMask",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "protocol",
     "name": "Protocol",
     "type": "str",
     "choices": [
      "STATIC"
     ],
     "settable": true
    },
    {
     "option": "cost",
     "name": "Cost",
     "type": "int",
     "settable": true
    },
    {
     "option": "null_route",
     "name": "NullRoute",
     "type": "bool",
     "settable": true
    },
    {
     "option": "next_hop",
     "name": "NextHop",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "next_hop_ip",
       "name": "NextHopIp",
       "type": "str",
       "settable": true
      },
      {
       "option": "next_hop_int_ref",
       "name": "NextHopIntRef",
       "type": "str",
       "settable": true
      },
      {
       "option": "weight",
       "name": "Weight",
       "type": "int",
       "settable": true
      }
     ]
    }
   ]
  },
  "IntentSource": {
   "module": "swmgr_intent_source",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "url",
     "name": "URL",
     "type": "str",
     "settable": true
    },
    {
     "option": "repo_url",
     "name": "RepoURL",
     "type": "str",
     "settable": true
    },
    {
     "option": "path",
     "name": "Path",
     "type": "str",
     "settable": true
    },
    {
     "option": "target_revision",
     "name": "TargetRevision",
     "type": "str",
     "settable": true
    },
    {
     "option": "repo_size_limit",
     "name": "RepoSizeLimit",
     "type": "int",
     "settable": true
    },
    {
     "option": "ca_certificates",
     "name": "CACertificates",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "interval",
     "name": "Interval",
     "type": "int",
     "settable": true
    },
    {
     "option": "username",
     "name": "Username",
     "type": "str",
     "settable": true
    },
    {
     "option": "password",
     "name": "Password",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "public_key",
     "name": "PublicKey",
     "type": "str",
     "settable": true
    },
    {
     "option": "allow_unsigned",
     "name": "AllowUnsigned",
     "type": "bool",
     "settable": true
    },
    {
     "option": "policy",
     "name": "Policy",
     "type": "str",
     "choices": [
      "report",
      "revert"
     ],
     "settable": true
    },
    {
     "option": "confirm_wait",
     "name": "ConfirmWait",
     "type": "int",
     "settable": true
    },
    {
     "option": "health_url",
     "name": "HealthURL",
     "type": "str",
     "settable": true
    },
    {
     "option": "webhook_secret",
     "name": "WebhookSecret",
     "type": "str",
     "secret": true,
     "settable": true
    }
   ]
  },
  "LLDPGlobal": {
   "module": "swmgr_lldp_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "tranmit_interval",
     "name": "TranmitInterval",
     "type": "int",
     "settable": true
    },
    {
     "option": "tx_rx_mode",
     "name": "TxRxMode",
     "type": "str",
     "choices": [
      "TxOnly",
      "RxOnly",
      "TxRx"
     ],
     "settable": true
    },
    {
     "option": "snoop_and_drop",
     "name": "SnoopAndDrop",
     "type": "bool",
     "settable": false
    }
   ]
  },
  "LLDPIntf": {
   "module": "swmgr_lldp_intf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "tx_rx_mode",
     "name": "TxRxMode",
     "type": "str",
     "choices": [
      "TxOnly",
      "RxOnly",
      "TxRx"
     ],
     "settable": true
    }
   ]
  },
  "LaPortChannel": {
   "module": "swmgr_la_port_channel",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "intf_ref_list",
     "name": "IntfRefList",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "lag_type",
     "name": "LagType",
     "type": "int",
     "settable": true
    },
    {
     "option": "min_links",
     "name": "MinLinks",
     "type": "int",
     "settable": true
    },
    {
     "option": "interval",
     "name": "Interval",
     "type": "int",
     "settable": true
    },
    {
     "option": "lacp_mode",
     "name": "LacpMode",
     "type": "int",
     "settable": true
    },
    {
     "option": "system_id_mac",
     "name": "SystemIdMac",
     "type": "str",
     "settable": true
    },
    {
     "option": "system_priority",
     "name": "SystemPriority",
     "type": "int",
     "settable": true
    },
    {
     "option": "lag_hash",
     "name": "LagHash",
     "type": "int",
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    }
   ]
  },
  "LogicalIntf": {
   "module": "swmgr_logical_intf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "type",
     "name": "Type",
     "type": "str",
     "choices": [
      "Loopback"
     ],
     "settable": true
    }
   ]
  },
  "NDPGlobal": {
   "module": "swmgr_ndp_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "reachable_time",
     "name": "ReachableTime",
     "type": "int",
     "settable": true
    },
    {
     "option": "retransmit_interval",
     "name": "RetransmitInterval",
     "type": "int",
     "settable": true
    },
    {
     "option": "router_advertisement_interval",
     "name": "RouterAdvertisementInterval",
     "type": "int",
     "settable": true
    }
   ]
  },
  "NtpServer": {
   "module": "swmgr_ntp_server",
   "singleton": false,
   "creatable": true,
   "keys": [
    "IpAddr"
   ],
   "fields": [
    {
     "option": "ip_addr",
     "name": "IpAddr",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "min_poll",
     "name": "MinPoll",
     "type": "int",
     "settable": true
    },
    {
     "option": "max_poll",
     "name": "MaxPoll",
     "type": "int",
     "settable": true
    },
    {
     "option": "source_intf",
     "name": "SourceIntf",
     "type": "str",
     "settable": true
    },
    {
     "option": "prefer",
     "name": "Prefer",
     "type": "bool",
     "settable": true
    }
   ]
  },
  "PolicyCondition": {
   "module": "swmgr_policy_condition",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "condition_type",
     "name": "ConditionType",
     "type": "str",
     "choices": [
      "MatchProtocol",
      "MatchDstIpPrefix",
      "MatchSrcIpPrefix"
     ],
     "settable": true
    },
    {
     "option": "protocol",
     "name": "Protocol",
     "type": "str",
     "choices": [
      "",
      "CONNECTED",
      "STATIC",
      "BGP",
      "OSPF"
     ],
     "settable": true
    },
    {
     "option": "ip_prefix",
     "name": "IpPrefix",
     "type": "str",
     "settable": true
    },
    {
     "option": "mask_length_range",
     "name": "MaskLengthRange",
     "type": "str",
     "settable": true
    },
    {
     "option": "prefix_set",
     "name": "PrefixSet",
     "type": "str",
     "settable": true
    }
   ]
  },
  "PolicyDefinition": {
   "module": "swmgr_policy_definition",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "priority",
     "name": "Priority",
     "type": "int",
     "settable": true
    },
    {
     "option": "statement_list",
     "name": "StatementList",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "priority",
       "name": "Priority",
       "type": "int",
       "settable": true
      },
      {
       "option": "statement",
       "name": "Statement",
       "type": "str",
       "settable": true
      }
     ]
    },
    {
     "option": "match_type",
     "name": "MatchType",
     "type": "str",
     "choices": [
      "all",
      "any"
     ],
     "settable": true
    },
    {
     "option": "policy_type",
     "name": "PolicyType",
     "type": "str",
     "choices": [
      "BGP",
      "OSPF",
      "ALL"
     ],
     "settable": true
    }
   ]
  },
  "PolicyPrefixSet": {
   "module": "swmgr_policy_prefix_set",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "prefix_list",
     "name": "PrefixList",
     "type": "list",
     "elements": "dict",
     "settable": true,
     "sub": [
      {
       "option": "prefix",
       "name": "Prefix",
       "type": "str",
       "settable": true
      },
      {
       "option": "mask_length_range",
       "name": "MaskLengthRange",
       "type": "str",
       "settable": true
      }
     ]
    }
   ]
  },
  "PolicyStmt": {
   "module": "swmgr_policy_stmt",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "conditions",
     "name": "Conditions",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "action",
     "name": "Action",
     "type": "str",
     "choices": [
      "permit",
      "deny"
     ],
     "settable": true
    },
    {
     "option": "match_conditions",
     "name": "MatchConditions",
     "type": "str",
     "choices": [
      "all",
      "any"
     ],
     "settable": true
    }
   ]
  },
  "Port": {
   "module": "swmgr_port",
   "singleton": false,
   "creatable": false,
   "keys": [
    "IntfRef"
   ],
   "fields": [
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "if_index",
     "name": "IfIndex",
     "type": "int",
     "settable": false
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "phy_intf_type",
     "name": "PhyIntfType",
     "type": "str",
     "choices": [
      "GMII",
      "SGMII",
      "QSMII",
      "SFI",
      "XFI",
      "XAUI",
      "XLAUI",
      "RXAUI",
      "CR",
      "CR2",
      "CR4",
      "KR",
      "KR2",
      "KR4",
      "SR",
      "SR2",
      "SR4",
      "SR10",
      "LR",
      "LR4"
     ],
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "mac_addr",
     "name": "MacAddr",
     "type": "str",
     "settable": false
    },
    {
     "option": "speed",
     "name": "Speed",
     "type": "int",
     "settable": true
    },
    {
     "option": "duplex",
     "name": "Duplex",
     "type": "str",
     "choices": [
      "Half_Duplex",
      "Full_Duplex"
     ],
     "settable": true
    },
    {
     "option": "autoneg",
     "name": "Autoneg",
     "type": "str",
     "choices": [
      "ON",
      "OFF"
     ],
     "settable": true
    },
    {
     "option": "media_type",
     "name": "MediaType",
     "type": "str",
     "settable": true
    },
    {
     "option": "mtu",
     "name": "Mtu",
     "type": "int",
     "settable": true
    },
    {
     "option": "break_out_mode",
     "name": "BreakOutMode",
     "type": "str",
     "choices": [
      "1x100",
      "1x40",
      "2x50",
      "4x25",
      "4x10"
     ],
     "settable": true
    },
    {
     "option": "loopback_mode",
     "name": "LoopbackMode",
     "type": "str",
     "choices": [
      "NONE",
      "MAC",
      "PHY",
      "RMT"
     ],
     "settable": true
    },
    {
     "option": "enable_fec",
     "name": "EnableFEC",
     "type": "bool",
     "settable": true
    },
    {
     "option": "prbs_tx_enable",
     "name": "PRBSTxEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "prbs_rx_enable",
     "name": "PRBSRxEnable",
     "type": "bool",
     "settable": true
    },
    {
     "option": "prbs_polynomial",
     "name": "PRBSPolynomial",
     "type": "str",
     "choices": [
      "2^7",
      "2^23",
      "2^31"
     ],
     "settable": true
    },
    {
     "option": "dscp_to_cos_profile_ref",
     "name": "DscpToCosProfileRef",
     "type": "str",
     "settable": true
    },
    {
     "option": "pcp_to_cos_profile_ref",
     "name": "PcpToCosProfileRef",
     "type": "str",
     "settable": true
    },
    {
     "option": "sched_profile_ref",
     "name": "SchedProfileRef",
     "type": "str",
     "settable": true
    },
    {
     "option": "storm_control_profile",
     "name": "StormControlProfile",
     "type": "str",
     "settable": true
    }
   ]
  },
  "RadiusServer": {
   "module": "swmgr_radius_server",
   "singleton": false,
   "creatable": true,
   "keys": [
    "ServerIp"
   ],
   "fields": [
    {
     "option": "server_ip",
     "name": "ServerIp",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "port",
     "name": "Port",
     "type": "int",
     "settable": true
    },
    {
     "option": "acct_port",
     "name": "AcctPort",
     "type": "int",
     "settable": true
    },
    {
     "option": "secret",
     "name": "Secret",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "timeout",
     "name": "Timeout",
     "type": "int",
     "settable": true
    },
    {
     "option": "retries",
     "name": "Retries",
     "type": "int",
     "settable": true
    },
    {
     "option": "priority",
     "name": "Priority",
     "type": "int",
     "settable": true
    }
   ]
  },
  "Span": {
   "module": "swmgr_span",
   "singleton": false,
   "creatable": true,
   "keys": [
    "SpanSessionName"
   ],
   "fields": [
    {
     "option": "span_session_name",
     "name": "SpanSessionName",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "dst_intf_ref",
     "name": "DstIntfRef",
     "type": "str",
     "settable": true
    },
    {
     "option": "mirror_dir",
     "name": "MirrorDir",
     "type": "str",
     "choices": [
      "RX",
      "TX",
      "BOTH"
     ],
     "settable": true
    },
    {
     "option": "src_intf_ref_list",
     "name": "SrcIntfRefList",
     "type": "list",
     "elements": "str",
     "settable": true
    }
   ]
  },
  "SyslogCollector": {
   "module": "swmgr_syslog_collector",
   "singleton": false,
   "creatable": true,
   "keys": [
    "ServerIpAddr"
   ],
   "fields": [
    {
     "option": "server_ip_addr",
     "name": "ServerIpAddr",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "port",
     "name": "Port",
     "type": "int",
     "settable": true
    },
    {
     "option": "transport",
     "name": "Transport",
     "type": "str",
     "choices": [
      "UDP",
      "TCP"
     ],
     "settable": true
    },
    {
     "option": "severity",
     "name": "Severity",
     "type": "str",
     "choices": [
      "emerg",
      "alert",
      "crit",
      "err",
      "warning",
      "notice",
      "info",
      "debug"
     ],
     "settable": true
    },
    {
     "option": "facility",
     "name": "Facility",
     "type": "int",
     "settable": true
    }
   ]
  },
  "SystemParam": {
   "module": "swmgr_system_param",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "mgmt_ip",
     "name": "MgmtIp",
     "type": "str",
     "settable": true
    },
    {
     "option": "hostname",
     "name": "Hostname",
     "type": "str",
     "settable": true
    },
    {
     "option": "switch_mac",
     "name": "SwitchMac",
     "type": "str",
     "settable": false
    },
    {
     "option": "sw_version",
     "name": "SwVersion",
     "type": "str",
     "settable": false
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    },
    {
     "option": "timezone",
     "name": "Timezone",
     "type": "str",
     "settable": true
    }
   ]
  },
  "Tacacs": {
   "module": "swmgr_tacacs",
   "singleton": false,
   "creatable": true,
   "keys": [
    "ServerIp"
   ],
   "fields": [
    {
     "option": "server_ip",
     "name": "ServerIp",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "source_intf",
     "name": "SourceIntf",
     "type": "str",
     "settable": true
    },
    {
     "option": "auth_service",
     "name": "AuthService",
     "type": "str",
     "choices": [
      "login",
      "enable",
      "ppp",
      "arap",
      "pt",
      "rcmd",
      "x25",
      "nasi",
      "fwproxy"
     ],
     "settable": true
    },
    {
     "option": "secret",
     "name": "Secret",
     "type": "str",
     "secret": true,
     "settable": true
    },
    {
     "option": "port",
     "name": "Port",
     "type": "int",
     "settable": true
    },
    {
     "option": "privilege_level",
     "name": "PrivilegeLevel",
     "type": "int",
     "settable": true
    },
    {
     "option": "debug",
     "name": "Debug",
     "type": "int",
     "settable": true
    }
   ]
  },
  "TacacsGlobal": {
   "module": "swmgr_tacacs_global",
   "singleton": true,
   "creatable": false,
   "keys": [
    "ProfileName"
   ],
   "fields": [
    {
     "option": "profile_name",
     "name": "ProfileName",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "enable",
     "name": "Enable",
     "type": "str",
     "choices": [
      "true",
      "false"
     ],
     "settable": true
    },
    {
     "option": "timeout",
     "name": "Timeout",
     "type": "int",
     "settable": true
    }
   ]
  },
  "User": {
   "module": "swmgr_user",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Name"
   ],
   "fields": [
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "access",
     "name": "Access",
     "type": "str",
     "choices": [
      "Bash",
      "CLI"
     ],
     "settable": true
    },
    {
     "option": "default_shell",
     "name": "DefaultShell",
     "type": "str",
     "choices": [
      "Bash",
      "CLI"
     ],
     "settable": true
    },
    {
     "option": "password",
     "name": "Password",
     "type": "str",
     "secret": true,
     "transient": true,
     "settable": true
    },
    {
     "option": "group",
     "name": "Group",
     "type": "str",
     "settable": true
    }
   ]
  },
  "Vlan": {
   "module": "swmgr_vlan",
   "singleton": false,
   "creatable": true,
   "keys": [
    "VlanId"
   ],
   "fields": [
    {
     "option": "vlan_id",
     "name": "VlanId",
     "type": "int",
     "key": true,
     "settable": true
    },
    {
     "option": "intf_list",
     "name": "IntfList",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "untag_intf_list",
     "name": "UntagIntfList",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "auto_state",
     "name": "AutoState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "description",
     "name": "Description",
     "type": "str",
     "settable": true
    }
   ]
  },
  "Vrf": {
   "module": "swmgr_vrf",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "name",
     "name": "Name",
     "type": "str",
     "settable": true
    }
   ]
  },
  "VxlanEndpoint": {
   "module": "swmgr_vxlan_endpoint",
   "singleton": true,
   "creatable": false,
   "keys": [
    "Vrf"
   ],
   "fields": [
    {
     "option": "vrf",
     "name": "Vrf",
     "type": "str",
     "choices": [
      "default"
     ],
     "key": true,
     "settable": true,
     "default": "default"
    },
    {
     "option": "source_interface",
     "name": "SourceInterface",
     "type": "str",
     "settable": true
    },
    {
     "option": "udp_port",
     "name": "UdpPort",
     "type": "int",
     "settable": true
    }
   ]
  },
  "VxlanInstance": {
   "module": "swmgr_vxlan_instance",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Vni"
   ],
   "fields": [
    {
     "option": "vni",
     "name": "Vni",
     "type": "int",
     "key": true,
     "settable": true
    },
    {
     "option": "vlan_id",
     "name": "VlanId",
     "type": "int",
     "settable": true
    },
    {
     "option": "admin_state",
     "name": "AdminState",
     "type": "str",
     "choices": [
      "UP",
      "DOWN"
     ],
     "settable": true
    },
    {
     "option": "route_distinguisher",
     "name": "RouteDistinguisher",
     "type": "str",
     "settable": true
    },
    {
     "option": "import_route_targets",
     "name": "ImportRouteTargets",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "export_route_targets",
     "name": "ExportRouteTargets",
     "type": "list",
     "elements": "str",
     "settable": true
    }
   ]
  },
  "VxlanVtepInstance": {
   "module": "swmgr_vxlan_vtep_instance",
   "singleton": false,
   "creatable": true,
   "keys": [
    "Intf",
    "Vni"
   ],
   "fields": [
    {
     "option": "intf",
     "name": "Intf",
     "type": "str",
     "key": true,
     "settable": true
    },
    {
     "option": "vni",
     "name": "Vni",
     "type": "int",
     "key": true,
     "settable": true
    },
    {
     "option": "intf_ref",
     "name": "IntfRef",
     "type": "str",
     "settable": true
    },
    {
     "option": "src_ip",
     "name": "SrcIp",
     "type": "str",
     "settable": true
    },
    {
     "option": "dst_ip",
     "name": "DstIp",
     "type": "list",
     "elements": "str",
     "settable": true
    },
    {
     "option": "vlan_id",
     "name": "VlanId",
     "type": "int",
     "settable": false
    },
    {
     "option": "tos",
     "name": "TOS",
     "type": "int",
     "settable": true
    },
    {
     "option": "ttl",
     "name": "TTL",
     "type": "int",
     "settable": true
    },
    {
     "option": "mtu",
     "name": "Mtu",
     "type": "int",
     "settable": true
    },
    {
     "option": "dst_udp",
     "name": "DstUDP",
     "type": "int",
     "settable": true
    },
    {
     "option": "inner_vlan_handling_mode",
     "name": "InnerVlanHandlingMode",
     "type": "int",
     "settable": false
    }
   ]
  }
 }
}''')

KINDS = MODEL['kinds']
ACTIONS = MODEL['actions']
