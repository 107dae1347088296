/** The README walkthrough's answer patterns (test/walkthrough.ts): what they accept and refuse. */
import { describe, expect, it } from 'vitest';
import { matchAnswer, namesUsed, parseAnswer, readWalkthrough } from '../walkthrough.js';

const match = (pattern: string, actual: unknown, fixed: Record<string, string> = {}) => matchAnswer(parseAnswer(pattern), actual, fixed);

describe('README walkthrough answers', () => {
  it('bare … stands for any value, other members and further elements', () => {
    expect(match('{"a":…,…}', { a: [1], b: 2 })).toEqual({});
    expect(match('[{…},…]', [{ x: 1 }, 3, 4])).toEqual({});
    expect(() => match('[{…},…]', [])).toThrow('at /: expected at least 1 elements, got 0');
    expect(() => match('[{…}]', [{}, {}])).toThrow('expected 1 elements, got 2');
    expect(() => match('{"a":…}', { b: 1 })).toThrow('member a is missing');
    expect(() => match('{"a":{…}}', { a: 'text' })).toThrow('at /a: expected an object');
  });

  it('matches strings with … as any text and literal values exactly', () => {
    expect(match('{"t":"…Engineer…","n":378,"s":null}', { t: 'Senior Engineer II', n: 378, s: null })).toEqual({});
    expect(() => match('{"t":"…Engineer…"}', { t: 'Designer' })).toThrow('at /t: expected "…Engineer…", got "Designer"');
    expect(() => match('{"n":378}', { n: 377 })).toThrow('at /n: expected 378, got 377');
    expect(() => match('{"s":"draft"}', { s: null })).toThrow('expected a string');
  });

  it('captures $NAME, consistently within an answer, and checks names the command used', () => {
    expect(match('{"jobId":"$JOB_ID","url":"…/jobs/$JOB_ID"}', { jobId: 'j-1', url: 'http://x/jobs/j-1' })).toEqual({ JOB_ID: 'j-1' });
    expect(() => match('{"jobId":"$JOB_ID","url":"…/jobs/$JOB_ID"}', { jobId: 'j-1', url: 'http://x/jobs/j-2' })).toThrow('at /url');
    expect(() => match('{"id":"$JOB_ID"}', { id: 'j-2' }, { JOB_ID: 'j-1' })).toThrow('expected "$JOB_ID", got "j-2"');
    expect(namesUsed(`curl -s "$API/jobs/$JOB_ID" -d '{"a":"'"\${SEGMENT_ID}"'"}'`)).toEqual(new Set(['API', 'JOB_ID', 'SEGMENT_ID']));
  });

  it('reads sh/json pairs between the markers and refuses a command without an answer', () => {
    const readme = 'intro\n```sh\nnot this\n```\n<!-- walkthrough:start -->\n```sh\ncurl a   # repeat until done\n```\ntext\n```json\n{}\n```\n<!-- walkthrough:end -->\n';
    expect(readWalkthrough(readme)).toEqual([{ command: 'curl a   # repeat until done', answer: '{}', line: 6, repeat: true }]);
    expect(() => readWalkthrough(readme.replace('```json', '```sh'))).toThrow('README line 6: the command has no json answer block after it');
    expect(() => readWalkthrough('no markers')).toThrow('no walkthrough');
  });
});
