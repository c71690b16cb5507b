# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_acl_rule
short_description: "Manage swmgr AclRule objects"
description:
  - "One rule of access control lists: what a packet must match (every given field; an empty or zero field matches anything) and the Action taken. A rule is used by the ACLs whose RuleNameList names it, in that list's order; one no ACL names does nothing. A packet that matches no rule of an ACL passes: end the list with a rule that matches everything (no field given) and Action Deny for an allow-list."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of AclRule: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The AclRule objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      rule_name:
        description:
          - "API field C(RuleName)."
          - "the rule's name, which an Acl's RuleNameList names."
          - "Key: identifies the object."
        type: str
      source_mac:
        description:
          - "API field C(SourceMac)."
          - "source MAC address (MAC ACLs)."
        type: str
      dest_mac:
        description:
          - "API field C(DestMac)."
          - "destination MAC address (MAC ACLs)."
        type: str
      source_ip:
        description:
          - "API field C(SourceIp)."
          - "source address, IPv4 or IPv6; with SourceMask, a network."
        type: str
      dest_ip:
        description:
          - "API field C(DestIp)."
          - "destination address, IPv4 or IPv6; with DestMask, a network."
        type: str
      source_mask:
        description:
          - "API field C(SourceMask)."
          - "SourceIp's prefix length or IPv4 mask; \"\": the address alone."
        type: str
      dest_mask:
        description:
          - "API field C(DestMask)."
          - "DestIp's prefix length or IPv4 mask; \"\": the address alone."
        type: str
      proto:
        description:
          - "API field C(Proto)."
          - "TCP, UDP, ICMP (IPv4), ICMPv6; \"\": any."
        type: str
        choices:
          - ""
          - "TCP"
          - "UDP"
          - "ICMP"
          - "ICMPv6"
      src_port:
        description:
          - "API field C(SrcPort)."
          - "FlexSwitch's physical source port match (its MLAG); swmgr matches ports by binding the ACL to them (Acl IntfList), so this stays \"\"."
        type: str
      dst_port:
        description:
          - "API field C(DstPort)."
          - "FlexSwitch's physical destination port match (its MLAG); stays \"0\"."
          - "swmgr's default: C(\"0\")."
        type: str
      l4_src_port:
        description:
          - "API field C(L4SrcPort)."
          - "TCP or UDP source port, compared as L4PortMatch says; 0: any."
          - "From 0 to 65535."
        type: int
      l4_dst_port:
        description:
          - "API field C(L4DstPort)."
          - "TCP or UDP destination port, compared as L4PortMatch says; 0: any."
          - "From 0 to 65535."
        type: int
      l4_port_match:
        description:
          - "API field C(L4PortMatch)."
          - "how L4SrcPort and L4DstPort are compared: NA or EQ equal, NEQ not equal, LT less than, GT greater than; RANGE: the destination port in L4MinPort..L4MaxPort."
          - "swmgr's default: C(\"NA\")."
        type: str
        choices:
          - "NA"
          - "EQ"
          - "NEQ"
          - "LT"
          - "GT"
          - "RANGE"
      l4_min_port:
        description:
          - "API field C(L4MinPort)."
          - "the first destination port of a RANGE."
          - "From 0 to 65535."
        type: int
      l4_max_port:
        description:
          - "API field C(L4MaxPort)."
          - "the last destination port of a RANGE."
          - "From 0 to 65535."
        type: int
      dscp:
        description:
          - "API field C(Dscp)."
          - "the DSCP (0..63) of an IP packet; -1: any."
          - "swmgr's default: C(-1)."
          - "From -1 to 63."
        type: int
      action:
        description:
          - "API field C(Action)."
          - "Allow: the packet passes, no later rule is looked at; Deny: it is dropped."
          - "swmgr's default: C(\"Allow\")."
        type: str
        choices:
          - "Allow"
          - "Deny"
      log:
        description:
          - "API field C(Log)."
          - "log every match (the Linux backend: the kernel log, prefixed with the ACL's and the rule's names, at most 10 a second per rule)."
        type: bool
'''

EXAMPLES = r'''
- name: "Make AclRule as given"
  swmgr.switch.swmgr_acl_rule:
    state: merged
    config:
      - rule_name: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("AclRule")


if __name__ == '__main__':
    main()
