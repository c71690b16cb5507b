# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_tacacs
short_description: "Manage swmgr Tacacs objects"
description:
  - "A TACACS+ server (RFC 8907) that authenticates logins, gives the user's role (its priv-lvl: see docs/aaa.md) and receives accounting records. Servers are asked in the order they were created; the next is tried only when one does not answer."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Tacacs: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Tacacs objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      server_ip:
        description:
          - "API field C(ServerIp)."
          - "the server's address."
          - "Key: identifies the object."
        type: str
      source_intf:
        description:
          - "API field C(SourceIntf)."
          - "the interface whose IPv4 address is the source of the connections to the server (on the Linux backend the kernel's address of that interface, on the simulated switch its IPv4Intf's), read at each connection; an interface without one: the routing table's source, and the log says why."
          - "swmgr's default: C(\"ma1\")."
        type: str
      auth_service:
        description:
          - "API field C(AuthService)."
          - "the service named in the authentication and authorization requests."
          - "swmgr's default: C(\"ppp\")."
        type: str
        choices:
          - "login"
          - "enable"
          - "ppp"
          - "arap"
          - "pt"
          - "rcmd"
          - "x25"
          - "nasi"
          - "fwproxy"
      secret:
        description:
          - "API field C(Secret)."
          - "the shared key that obfuscates the packets (RFC 8907 section 4.5); write-only, stored encrypted."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
      port:
        description:
          - "API field C(Port)."
          - "TCP port."
          - "swmgr's default: C(49)."
          - "From 1 to 65535."
        type: int
      privilege_level:
        description:
          - "API field C(PrivilegeLevel)."
          - "the priv_lvl swmgr asks for in its requests."
          - "swmgr's default: C(15)."
          - "From 1 to 15."
        type: int
      debug:
        description:
          - "API field C(Debug)."
          - "1 logs every exchange with the server (never the password or the secret)."
          - "swmgr's default: C(0)."
          - "From 0 to 1."
        type: int
'''

EXAMPLES = r'''
- name: "Make Tacacs as given"
  swmgr.switch.swmgr_tacacs:
    state: merged
    config:
      - server_ip: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Tacacs")


if __name__ == '__main__':
    main()
