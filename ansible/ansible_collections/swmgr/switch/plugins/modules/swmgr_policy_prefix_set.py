# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_policy_prefix_set
short_description: "Manage swmgr PolicyPrefixSet objects"
description:
  - "A named list of prefixes (FRR's prefix-list): a PolicyCondition of type MatchDstIpPrefix or MatchSrcIpPrefix matches a route in any of them. A set in use cannot be deleted."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of PolicyPrefixSet: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The PolicyPrefixSet objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "the set's name (FRR's prefix-list)."
          - "Key: identifies the object."
        type: str
      prefix_list:
        description:
          - "API field C(PrefixList)."
          - "the prefixes, in order; IPv4 and IPv6 ones may be mixed."
        type: list
        elements: dict
        suboptions:
          prefix:
            description:
              - "API field C(Prefix)."
            type: str
          mask_length_range:
            description:
              - "API field C(MaskLengthRange)."
              - "exact: the prefix itself; lo-hi: the prefix's more specifics of those lengths."
              - "swmgr's default: C(\"exact\")."
            type: str
'''

EXAMPLES = r'''
- name: "Make PolicyPrefixSet as given"
  swmgr.switch.swmgr_policy_prefix_set:
    state: merged
    config:
      - name: "SPINES"
        prefix_list: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("PolicyPrefixSet")


if __name__ == '__main__':
    main()
