# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_control_plane_acl_rule
short_description: "Manage swmgr ControlPlaneAclRule objects"
description:
  - "A rule of the control-plane ACL: which sources may reach one of swmgr's own listeners (HTTPS: the REST API and the web page, GNMI, SSH: the host's sshd) on the switch. Rules are looked at in Sequence order, the first that matches decides, and a connection no rule matches is accepted. Connections over the loopback interface are always accepted, before any rule: no rule can lock out the switch's own clients (swmgr cli on the switch)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of ControlPlaneAclRule: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The ControlPlaneAclRule objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "the rule's name."
          - "Key: identifies the object."
        type: str
      sequence:
        description:
          - "API field C(Sequence)."
          - "its place: lower first; two rules do not share one."
          - "From 1 to 65535."
        type: int
      service:
        description:
          - "API field C(Service)."
          - "the listener: HTTPS (REST and the web page), GNMI, SSH."
        type: str
        choices:
          - "HTTPS"
          - "GNMI"
          - "SSH"
      source_ip:
        description:
          - "API field C(SourceIp)."
          - "the source address, IPv4 or IPv6; \"\": any (both families)."
        type: str
      source_mask:
        description:
          - "API field C(SourceMask)."
          - "SourceIp's prefix length or IPv4 mask."
        type: str
      action:
        description:
          - "API field C(Action)."
          - "swmgr's default: C(\"Allow\")."
        type: str
        choices:
          - "Allow"
          - "Deny"
'''

EXAMPLES = r'''
- name: "Make ControlPlaneAclRule as given"
  swmgr.switch.swmgr_control_plane_acl_rule:
    state: merged
    config:
      - name: "example"
        sequence: 1
        service: "HTTPS"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("ControlPlaneAclRule")


if __name__ == '__main__':
    main()
