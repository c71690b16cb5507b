# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_port
short_description: "Manage swmgr Port objects"
description:
  - "A front-panel port (fpPort\u003cN\u003e) or a breakout sub-port (fpPort\u003cN\u003es\u003cM\u003e). Ports are discovered from the switch; they are changed with PATCH and cannot be created or deleted. BreakOutMode 4x10, 4x25 or 2x50 on a front-panel port creates its sub-ports; 1x40 or 1x100 removes them. A broken-out port itself cannot be used by other objects (use its sub-ports), and a port in use cannot be broken out."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Port: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Port objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "port name."
          - "Key: identifies the object."
        type: str
      description:
        description:
          - "API field C(Description)."
          - "swmgr's default: C(\"FP Port\")."
        type: str
      phy_intf_type:
        description:
          - "API field C(PhyIntfType)."
          - "swmgr's default: C(\"CR4\")."
        type: str
        choices:
          - "GMII"
          - "SGMII"
          - "QSMII"
          - "SFI"
          - "XFI"
          - "XAUI"
          - "XLAUI"
          - "RXAUI"
          - "CR"
          - "CR2"
          - "CR4"
          - "KR"
          - "KR2"
          - "KR4"
          - "SR"
          - "SR2"
          - "SR4"
          - "SR10"
          - "LR"
          - "LR4"
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"DOWN\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
      speed:
        description:
          - "API field C(Speed)."
          - "Mb/s."
          - "swmgr's default: C(40000)."
          - "From 10 to 100000."
        type: int
      duplex:
        description:
          - "API field C(Duplex)."
          - "swmgr's default: C(\"Full_Duplex\")."
        type: str
        choices:
          - "Half_Duplex"
          - "Full_Duplex"
      autoneg:
        description:
          - "API field C(Autoneg)."
          - "swmgr's default: C(\"OFF\")."
        type: str
        choices:
          - "ON"
          - "OFF"
      media_type:
        description:
          - "API field C(MediaType)."
        type: str
      mtu:
        description:
          - "API field C(Mtu)."
          - "bytes."
          - "swmgr's default: C(1500)."
          - "From 68 to 9216."
        type: int
      break_out_mode:
        description:
          - "API field C(BreakOutMode)."
          - "swmgr's default: C(\"1x40\")."
        type: str
        choices:
          - "1x100"
          - "1x40"
          - "2x50"
          - "4x25"
          - "4x10"
      loopback_mode:
        description:
          - "API field C(LoopbackMode)."
          - "swmgr's default: C(\"NONE\")."
        type: str
        choices:
          - "NONE"
          - "MAC"
          - "PHY"
          - "RMT"
      enable_fec:
        description:
          - "API field C(EnableFEC)."
        type: bool
      prbs_tx_enable:
        description:
          - "API field C(PRBSTxEnable)."
        type: bool
      prbs_rx_enable:
        description:
          - "API field C(PRBSRxEnable)."
        type: bool
      prbs_polynomial:
        description:
          - "API field C(PRBSPolynomial)."
          - "swmgr's default: C(\"2^7\")."
        type: str
        choices:
          - "2^7"
          - "2^23"
          - "2^31"
      dscp_to_cos_profile_ref:
        description:
          - "API field C(DscpToCosProfileRef)."
        type: str
      pcp_to_cos_profile_ref:
        description:
          - "API field C(PcpToCosProfileRef)."
        type: str
      sched_profile_ref:
        description:
          - "API field C(SchedProfileRef)."
        type: str
      storm_control_profile:
        description:
          - "API field C(StormControlProfile)."
          - "swmgr's default: C(\"NONE\")."
        type: str
'''

EXAMPLES = r'''
- name: "Make Port as given"
  swmgr.switch.swmgr_port:
    state: merged
    config:
      - intf_ref: "fpPort1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Port")


if __name__ == '__main__':
    main()
