# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bfd_session_param
short_description: "Manage swmgr BfdSessionParam objects"
description:
  - "Named BFD parameters, which BfdSession ParamName and BGPv4Neighbor BfdSessionParam name. \"default\" is named by default; without an object of that name it means the BFD daemon's defaults (300 ms, multiplier 3). A parameter set in use cannot be deleted."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BfdSessionParam: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BfdSessionParam objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "the parameters' name."
          - "Key: identifies the object."
        type: str
      required_min_rx_interval:
        description:
          - "API field C(RequiredMinRxInterval)."
          - "ms: the shortest interval between received packets the switch asks for."
          - "swmgr's default: C(1000)."
          - "From 10 to 60000."
        type: int
      desired_min_tx_interval:
        description:
          - "API field C(DesiredMinTxInterval)."
          - "ms: the interval between sent packets the switch would like."
          - "swmgr's default: C(1000)."
          - "From 10 to 60000."
        type: int
      local_multiplier:
        description:
          - "API field C(LocalMultiplier)."
          - "packets missed before the session is down."
          - "swmgr's default: C(3)."
          - "From 2 to 255."
        type: int
      required_min_echo_rx_interval:
        description:
          - "API field C(RequiredMinEchoRxInterval)."
          - "ms; 0: no echo packets received; else 10..60000."
          - "From 0 to 60000."
        type: int
      auth_type:
        description:
          - "API field C(AuthType)."
          - "swmgr's default: C(\"simple\")."
        type: str
        choices:
          - "simple"
          - "keyedmd5"
          - "metmd5"
          - "keyedsha1"
          - "metsha1"
      auth_key_id:
        description:
          - "API field C(AuthKeyId)."
          - "swmgr's default: C(1)."
          - "From 0 to 255."
        type: int
      auth_data:
        description:
          - "API field C(AuthData)."
          - "the authentication key; write-only, stored encrypted (FlexSwitch's SDK sends \"snaproute\")."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
'''

EXAMPLES = r'''
- name: "Make BfdSessionParam as given"
  swmgr.switch.swmgr_bfd_session_param:
    state: merged
    config:
      - name: "SPINES"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BfdSessionParam")


if __name__ == '__main__':
    main()
