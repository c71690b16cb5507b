# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_dhcp_relay_global
short_description: "Manage swmgr DhcpRelayGlobal objects"
description:
  - "The DHCP relay agent (RFC 1542, option 82 of RFC 3046): when enabled, the DHCP requests of clients on each DhcpRelayIntf's interface are relayed to its servers. On the Linux backend with --dhcp-relay dhcrelay, Debian's dhcrelay relays them; elsewhere the simulated switch keeps the settings."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of DhcpRelayGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one DhcpRelayGlobal."
    type: dict
    suboptions:
      vrf:
        description:
          - "API field C(Vrf)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"default\")."
        type: str
        choices:
          - "default"
      enable:
        description:
          - "API field C(Enable)."
        type: bool
      hop_count_limit:
        description:
          - "API field C(HopCountLimit)."
          - "requests that crossed more relays than this are dropped."
          - "swmgr's default: C(32)."
          - "From 1 to 255."
        type: int
'''

EXAMPLES = r'''
- name: "Make DhcpRelayGlobal as given"
  swmgr.switch.swmgr_dhcp_relay_global:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("DhcpRelayGlobal")


if __name__ == '__main__':
    main()
