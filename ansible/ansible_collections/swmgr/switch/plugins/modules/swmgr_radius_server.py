# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_radius_server
short_description: "Manage swmgr RadiusServer objects"
description:
  - "A RADIUS server (RFC 2865; accounting RFC 2866) that authenticates logins and gives the user's role (Service-Type or Filter-Id: see docs/aaa.md). Servers are asked by Priority (lowest first, then creation order); the next is tried only when one does not answer."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of RadiusServer: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The RadiusServer objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      server_ip:
        description:
          - "API field C(ServerIp)."
          - "the server's address."
          - "Key: identifies the object."
        type: str
      port:
        description:
          - "API field C(Port)."
          - "UDP port of authentication."
          - "swmgr's default: C(1812)."
          - "From 1 to 65535."
        type: int
      acct_port:
        description:
          - "API field C(AcctPort)."
          - "UDP port of accounting; 0 sends no accounting to this server."
          - "swmgr's default: C(1813)."
          - "From 0 to 65535."
        type: int
      secret:
        description:
          - "API field C(Secret)."
          - "the shared secret; write-only, stored encrypted."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
      timeout:
        description:
          - "API field C(Timeout)."
          - "seconds to wait for each answer."
          - "swmgr's default: C(5)."
          - "From 1 to 60."
        type: int
      retries:
        description:
          - "API field C(Retries)."
          - "requests sent again before the server counts as not answering."
          - "swmgr's default: C(2)."
          - "From 0 to 10."
        type: int
      priority:
        description:
          - "API field C(Priority)."
          - "lower is asked first."
          - "swmgr's default: C(1)."
          - "From 1 to 64."
        type: int
'''

EXAMPLES = r'''
- name: "Make RadiusServer as given"
  swmgr.switch.swmgr_radius_server:
    state: merged
    config:
      - server_ip: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("RadiusServer")


if __name__ == '__main__':
    main()
