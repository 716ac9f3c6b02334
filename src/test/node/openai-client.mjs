// Streams a chat completion and makes a plain completion through the sidecar with the official openai npm
// client, then prints what it got as one JSON line. Usage: node openai-client.mjs <baseURL>
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.argv[2], apiKey: 'sk-test-not-a-secret', maxRetries: 0 });
let streamed = '';
let chunks = 0;
const stream = await client.chat.completions.create({
  model: 'sim-llama-8b', stream: true, max_tokens: 6, messages: [{ role: 'user', content: 'hello' }],
});
for await (const chunk of stream) {
  chunks++;
  streamed += chunk.choices[0]?.delta?.content ?? '';
}
const usageStream = await client.chat.completions.create({
  model: 'sim-llama-8b', stream: true, max_tokens: 4, stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'hello' }],
});
let usage = null;
for await (const chunk of usageStream) {
  if (chunk.usage) usage = chunk.usage;
}
const completion = await client.completions.create({ model: 'sim-llama-8b', prompt: 'Once', max_tokens: 3 });
console.log(JSON.stringify({ streamed, chunks, usage, completion: completion.choices[0].text }));
