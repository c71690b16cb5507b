# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ntp_server
short_description: "Manage swmgr NtpServer objects"
description:
  - "An NTP server the switch synchronises with."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of NtpServer: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The NtpServer objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      ip_addr:
        description:
          - "API field C(IpAddr)."
          - "Key: identifies the object."
        type: str
      min_poll:
        description:
          - "API field C(MinPoll)."
          - "log2 seconds."
          - "swmgr's default: C(6)."
          - "From 4 to 17."
        type: int
      max_poll:
        description:
          - "API field C(MaxPoll)."
          - "log2 seconds."
          - "swmgr's default: C(10)."
          - "From 4 to 17."
        type: int
      source_intf:
        description:
          - "API field C(SourceIntf)."
          - "swmgr's default: C(\"ma1\")."
        type: str
      prefer:
        description:
          - "API field C(Prefer)."
        type: bool
'''

EXAMPLES = r'''
- name: "Make NtpServer as given"
  swmgr.switch.swmgr_ntp_server:
    state: merged
    config:
      - ip_addr: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("NtpServer")


if __name__ == '__main__':
    main()
