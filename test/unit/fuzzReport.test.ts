/** Reading schemathesis' JUnit report (scripts/fuzz.ts): each finding under the operation it belongs to. */
import { describe, expect, it } from 'vitest';
import { parseFindings } from '../../scripts/fuzz.js';

describe('parseFindings', () => {
  it('names the failing operation, not a passing one before it (passing cases are self-closed)', () => {
    // The shape of a real report (seed 417558161): the finding was reported under the first operation.
    const xml = `<?xml version="1.0" encoding="utf-8"?>
<testsuites disabled="0" errors="0" failures="1" tests="3" time="10.0">
  <testsuite name="schemathesis" errors="0" failures="1" skipped="0" tests="3" time="10.0">
    <testcase name="POST /contacts/filter-contacts" time="16.751357" />
    <testcase name="GET /segments/search" time="2.074346">
      <failure type="failure" message="ST101">1. Test Case ID: oH2Bx2

- ST101 Server error

[500] Internal Server Error</failure>
    </testcase>
    <testcase name="GET /segments/{id}" time="1.0" />
  </testsuite>
</testsuites>`;
    expect(parseFindings(xml)).toEqual(['GET /segments/search: ST101 Server error']);
    expect(parseFindings(xml.replace(/<failure[\s\S]*?<\/failure>/, ''))).toEqual([]);
  });
});
