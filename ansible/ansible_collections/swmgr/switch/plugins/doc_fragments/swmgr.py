# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)
"""The options every swmgr module takes to reach a switch."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  url:
    description:
      - The switch's swmgr, C(https://host[:port]), or C(http://127.0.0.1:8080) on the switch itself.
      - Credentials are never sent over plain HTTP to another host.
      - Set it once for a play with C(module_defaults) and the group C(group/swmgr.switch.swmgr).
    type: str
    required: true
  user:
    description:
      - The swmgr User to log in as (HTTP Basic). Not needed on loopback plain HTTP, where the
        switch knows the local OS user.
    type: str
  password:
    description:
      - The User's password. Use Ansible Vault; it is never logged.
    type: str
  validate_certs:
    description:
      - Check the HTTPS certificate against the system's CAs or O(ca_path).
      - Ignored when O(fingerprint) is given, which pins the certificate instead.
    type: bool
    default: true
  ca_path:
    description:
      - PEM file of the CA or the switch's own certificate (swmgr's self-signed C(tls-cert.pem)).
    type: path
  fingerprint:
    description:
      - SHA-256 of the switch's certificate (hex, colons allowed), as swmgr logs it at start; the
        connection is refused, before any credential is sent, if the certificate differs.
    type: str
  timeout:
    description:
      - Seconds to wait for each answer.
    type: int
    default: 60
'''
