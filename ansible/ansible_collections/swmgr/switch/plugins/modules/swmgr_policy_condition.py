# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_policy_condition
short_description: "Manage swmgr PolicyCondition objects"
description:
  - "What a route must be for a PolicyStmt to apply: its destination in a prefix (IpPrefix and MaskLengthRange) or in a PolicyPrefixSet (MatchDstIpPrefix), or the address of the peer it came from (MatchSrcIpPrefix). MatchProtocol is not supported yet: BGPGlobal's Redistribution Sources choose the protocols. A condition in use cannot be deleted."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of PolicyCondition: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The PolicyCondition objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "Key: identifies the object."
        type: str
      condition_type:
        description:
          - "API field C(ConditionType)."
        type: str
        choices:
          - "MatchProtocol"
          - "MatchDstIpPrefix"
          - "MatchSrcIpPrefix"
      protocol:
        description:
          - "API field C(Protocol)."
          - "FlexSwitch's protocol of MatchProtocol, which is not supported yet; \"\" with the other types."
        type: str
        choices:
          - ""
          - "CONNECTED"
          - "STATIC"
          - "BGP"
          - "OSPF"
      ip_prefix:
        description:
          - "API field C(IpPrefix)."
          - "with MatchDstIpPrefix or MatchSrcIpPrefix, instead of PrefixSet."
        type: str
      mask_length_range:
        description:
          - "API field C(MaskLengthRange)."
          - "with IpPrefix; \"\" is exact."
        type: str
      prefix_set:
        description:
          - "API field C(PrefixSet)."
          - "with MatchDstIpPrefix or MatchSrcIpPrefix, instead of IpPrefix."
        type: str
'''

EXAMPLES = r'''
- name: "Make PolicyCondition as given"
  swmgr.switch.swmgr_policy_condition:
    state: merged
    config:
      - name: "SPINES"
        condition_type: "MatchProtocol"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("PolicyCondition")


if __name__ == '__main__':
    main()
