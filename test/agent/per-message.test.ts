import { describe, expect, it } from 'vitest';
import { PerMessage } from '../../src/agent/per-message.js';
import { createJsonSizer } from '../../src/agent/json-size.js';

interface Message {
  role: string;
  content: string[];
}

function tracked(): { perMessage: PerMessage<Message, string>; derived: string[] } {
  const derived: string[] = [];
  const perMessage = new PerMessage<Message, string>(
    (message, index) => {
      derived.push(message.content.join(''));
      return `${index}:${message.content.join('')}`;
    },
    (result) => result.length,
  );
  return { perMessage, derived };
}

const message = (text: string): Message => ({ role: 'user', content: [text] });

describe('PerMessage', () => {
  it('works out only the messages a turn added', () => {
    const { perMessage, derived } = tracked();
    const conversation = [message('a'), message('b')];
    expect(perMessage.over(conversation)).toEqual({ results: ['0:a', '1:b'], size: 6 });
    conversation.push(message('c'), message('d'));
    expect(perMessage.over(conversation).results).toEqual(['0:a', '1:b', '2:c', '3:d']);
    expect(perMessage.over(conversation).size).toBe(12);
    expect(derived).toEqual(['a', 'b', 'c', 'd']);
  });

  it('works out again from a message whose content was swapped, or that was replaced', () => {
    const { perMessage, derived } = tracked();
    const conversation = [message('a'), message('b'), message('c'), message('d')];
    perMessage.over(conversation);
    derived.length = 0;
    conversation[1]!.content = ['B'];
    expect(perMessage.over(conversation).results).toEqual(['0:a', '1:B', '2:c', '3:d']);
    expect(derived).toEqual(['B', 'c', 'd']);
    derived.length = 0;
    conversation[2] = message('C');
    expect(perMessage.over(conversation).results).toEqual(['0:a', '1:B', '2:C', '3:d']);
    expect(derived).toEqual(['C', 'd']);
  });

  it('follows a conversation that got shorter, or is another one altogether', () => {
    const { perMessage, derived } = tracked();
    const conversation = [message('a'), message('b'), message('c')];
    perMessage.over(conversation);
    derived.length = 0;
    expect(perMessage.over(conversation.slice(0, 1))).toEqual({ results: ['0:a'], size: 3 });
    expect(derived).toEqual([]);
    expect(perMessage.over([message('x')])).toEqual({ results: ['0:x'], size: 3 });
    expect(perMessage.over([])).toEqual({ results: [], size: 0 });
  });
});

describe('createJsonSizer', () => {
  it('is the length of the conversation as JSON, after a turn is added and after an old result is swapped', () => {
    const size = createJsonSizer();
    const conversation: { role: string; content: unknown }[] = [{ role: 'user', content: 'fix the fee' }];
    expect(size(conversation)).toBe(JSON.stringify(conversation).length);
    conversation.push({ role: 'assistant', content: [{ type: 'text', text: 'on it' }] }, { role: 'user', content: [{ type: 'tool_result', content: 'x'.repeat(500) }] });
    expect(size(conversation)).toBe(JSON.stringify(conversation).length);
    // A context edit clears an old tool result by swapping its content, in the same array.
    conversation[2]!.content = [{ type: 'tool_result', content: '(cleared)' }];
    expect(size(conversation)).toBe(JSON.stringify(conversation).length);
    expect(size([])).toBe(2);
  });
});
