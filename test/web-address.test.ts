// Address parsing of the public-web boundary (src/web/address.ts): every IPv4 spelling
// inet_aton and the WHATWG URL parser accept, including the two ipaddr.js refuses on its
// own (a trailing dot, an empty hex part), and the IPv4-compatible "::a.b.c.d" form kept
// as RFC 4291 spells it (ipaddr.js alone reads it as IPv4-mapped).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAddress, formatAddress, parseIpLiteral } from '../src/web/address.ts';

function text(host: string): string | null {
  const parsed = parseIpLiteral(host);
  return parsed ? formatAddress(parsed) : null;
}

describe('parseIpLiteral', () => {
  it('reads every inet_aton spelling of 127.0.0.1', () => {
    for (const host of [
      '127.1',
      '127.0.1',
      '0x7f.1',
      '0X7F.0.0.1',
      '0177.0.0.1',
      '0x7f000001',
      '017700000001',
      '2130706433',
      '127.0.0.1.',
      '127.1.',
    ]) {
      assert.equal(text(host), '127.0.0.1', host);
    }
    assert.equal(text('0x.0x.0x.0x'), '0.0.0.0');
    assert.equal(text('0x'), '0.0.0.0');
  });

  it('refuses what is not an address, so it is treated as a name', () => {
    for (const host of ['256.1', '1.16777216', '4294967296', '08.1', '1.2.3.4.5', '1..2', '']) {
      assert.equal(text(host), null, host);
    }
    assert.equal(text('fe80::1%eth0'), null);
    assert.equal(text('1::2::3'), null);
  });

  it('keeps the IPv4-compatible form and judges IPv6 by the IPv4 address it carries', () => {
    assert.equal(text('::1.2.3.4'), '0:0:0:0:0:0:102:304');
    assert.equal(text('[::ffff:127.0.0.1]'), '0:0:0:0:0:ffff:7f00:1');
    const verdict = (host: string) => classifyAddress(parseIpLiteral(host)!);
    assert.deepEqual(verdict('::127.0.0.1'), {
      public: false,
      reason: 'IPv4-compatible ::/96 carrying loopback 127.0.0.0/8',
    });
    assert.deepEqual(verdict('2002:a9fe:a9fe::'), {
      public: false,
      reason: '6to4 2002::/16 carrying link-local 169.254.0.0/16 (cloud metadata)',
    });
    assert.deepEqual(verdict('2001::1'), { public: false, reason: 'Teredo 2001::/32' });
    assert.deepEqual(verdict('2606:4700::1'), { public: true });
    assert.deepEqual(verdict('93.184.216.34'), { public: true });
  });
});
