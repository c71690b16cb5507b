# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_syslog_collector
short_description: "Manage swmgr SyslogCollector objects"
description:
  - "A syslog collector that receives swmgr's log lines, sent by swmgr itself as RFC 5424 messages (UDP: RFC 5426, one message per datagram; TCP: RFC 6587 octet counting)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of SyslogCollector: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The SyslogCollector objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      server_ip_addr:
        description:
          - "API field C(ServerIpAddr)."
          - "the collector's address."
          - "Key: identifies the object."
        type: str
      port:
        description:
          - "API field C(Port)."
          - "swmgr's default: C(514)."
          - "From 1 to 65535."
        type: int
      transport:
        description:
          - "API field C(Transport)."
          - "swmgr's default: C(\"UDP\")."
        type: str
        choices:
          - "UDP"
          - "TCP"
      severity:
        description:
          - "API field C(Severity)."
          - "the least severe level sent."
          - "swmgr's default: C(\"info\")."
        type: str
        choices:
          - "emerg"
          - "alert"
          - "crit"
          - "err"
          - "warning"
          - "notice"
          - "info"
          - "debug"
      facility:
        description:
          - "API field C(Facility)."
          - "RFC 5424 facility; 16 is local0."
          - "swmgr's default: C(16)."
          - "From 0 to 23."
        type: int
'''

EXAMPLES = r'''
- name: "Make SyslogCollector as given"
  swmgr.switch.swmgr_syslog_collector:
    state: merged
    config:
      - server_ip_addr: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("SyslogCollector")


if __name__ == '__main__':
    main()
