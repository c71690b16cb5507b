# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_span
short_description: "Manage swmgr Span objects"
description:
  - "A port-mirroring session: traffic of the source ports is copied to the destination port."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Span: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Span objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      span_session_name:
        description:
          - "API field C(SpanSessionName)."
          - "Key: identifies the object."
        type: str
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
      dst_intf_ref:
        description:
          - "API field C(DstIntfRef)."
        type: str
      mirror_dir:
        description:
          - "API field C(MirrorDir)."
          - "swmgr's default: C(\"BOTH\")."
        type: str
        choices:
          - "RX"
          - "TX"
          - "BOTH"
      src_intf_ref_list:
        description:
          - "API field C(SrcIntfRefList)."
        type: list
        elements: str
'''

EXAMPLES = r'''
- name: "Make Span as given"
  swmgr.switch.swmgr_span:
    state: merged
    config:
      - span_session_name: "example"
        dst_intf_ref: "fpPort1"
        src_intf_ref_list: ["fpPort1"]
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Span")


if __name__ == '__main__':
    main()
