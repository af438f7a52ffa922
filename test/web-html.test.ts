// HTML to text and DuckDuckGo result parsing on htmlparser2 (src/web/html.ts,
// src/web/search.ts). The first cases are where the parser reads a page more correctly
// than the regular expressions it replaced: each of them failed on the old code.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htmlToText } from '../src/web/html.ts';
import { parseDuckDuckGo } from '../src/web/search.ts';

describe('htmlToText', () => {
  it('keeps a lone < in text instead of swallowing it as a tag', () => {
    assert.equal(htmlToText('<p>a < b and c > d</p>').text, 'a < b and c > d');
  });

  it('decodes references as HTML5 does: the full table, and legacy names without ;', () => {
    assert.equal(
      htmlToText('<p>&copy 2020 &amp co &NotEqual; &unknown;</p>').text,
      '© 2020 & co ≠ &unknown;',
    );
  });

  it('a <head> the page never closes ends where <body> starts', () => {
    assert.deepEqual(htmlToText('<head><title>t</title><body>visible<p>x'), {
      title: 't',
      text: 'visible\nx',
    });
  });

  it('blocks break lines, inline tags do not, dropped blocks stay dropped', () => {
    assert.deepEqual(
      htmlToText(
        '<title> A\n title </title><nav>menu</nav><p>a<br>b</p><ul><li>one<li>two</ul><script>x()</script><p>tail <b>bold</b>',
      ),
      { title: 'A title', text: 'a\nb\n\none\ntwo\n\ntail bold' },
    );
  });
});

describe('parseDuckDuckGo', () => {
  it('reads each result once: title, the uddg target, and the snippet text', () => {
    const page = `
      <div class="result results_links results_links_deep web-result">
        <div class="links_main links_deep result__body">
          <h2 class="result__title"><a rel="nofollow" class="result__a"
            href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1&amp;rut=x">Example &amp; <b>A</b></a></h2>
          <a class="result__snippet" href="x">The <b>first</b>
            snippet &hellip;</a>
        </div>
      </div>
      <div class="result results_links"><div class="result__body">
        <a class="result__a" href="https://second.example/">Second</a>
      </div></div>`;
    assert.deepEqual(parseDuckDuckGo(page, 10), [
      { title: 'Example & A', url: 'https://example.org/a?b=1', snippet: 'The first snippet …' },
      { title: 'Second', url: 'https://second.example/', snippet: '' },
    ]);
    assert.equal(parseDuckDuckGo(page, 1).length, 1);
  });
});
