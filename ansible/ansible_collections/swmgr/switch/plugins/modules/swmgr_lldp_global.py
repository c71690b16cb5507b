# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_lldp_global
short_description: "Manage swmgr LLDPGlobal objects"
description:
  - "LLDP on every front-panel port (802.1AB). On the Linux backend with --lldp lldpd, swmgr's lldpd sends and receives it; elsewhere the simulated switch keeps the settings and has no neighbors."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of LLDPGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one LLDPGlobal."
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
      tranmit_interval:
        description:
          - "API field C(TranmitInterval)."
          - "seconds between LLDP frames (FlexSwitch's spelling)."
          - "swmgr's default: C(30)."
          - "From 5 to 3600."
        type: int
      tx_rx_mode:
        description:
          - "API field C(TxRxMode)."
          - "on the ports without an LLDPIntf of their own."
          - "swmgr's default: C(\"TxRx\")."
        type: str
        choices:
          - "TxOnly"
          - "RxOnly"
          - "TxRx"
'''

EXAMPLES = r'''
- name: "Make LLDPGlobal as given"
  swmgr.switch.swmgr_lldp_global:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("LLDPGlobal")


if __name__ == '__main__':
    main()
