# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgpv6_aggregate
short_description: "Manage swmgr BGPv6Aggregate objects"
description:
  - "An IPv6 aggregate of BGP: while BGP has a route inside IpPrefix, it announces IpPrefix too (and only it with SendSummaryOnly)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPv6Aggregate: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BGPv6Aggregate objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      ip_prefix:
        description:
          - "API field C(IpPrefix)."
          - "the aggregate, like 2001:db8::/32 (host bits zero)."
          - "Key: identifies the object."
        type: str
      send_summary_only:
        description:
          - "API field C(SendSummaryOnly)."
          - "announce the aggregate and not the routes inside it."
        type: bool
      generate_as_set:
        description:
          - "API field C(GenerateASSet)."
          - "the aggregate's AS path carries the AS set of the routes inside it."
        type: bool
'''

EXAMPLES = r'''
- name: "Make BGPv6Aggregate as given"
  swmgr.switch.swmgr_bgpv6_aggregate:
    state: merged
    config:
      - ip_prefix: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPv6Aggregate")


if __name__ == '__main__':
    main()
