// Streams a chat completion and makes a plain completion through the sidecar with the official openai npm
// client, then prints what it got as one JSON line. Usage: node openai-client.mjs <baseURL>
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.argv[2], apiKey: 'sk-test-not-a-secret', maxRetries: 0 });
// twice: the sidecar learns the engine's stream layout from the first, and turns include_usage on for the second
const streams = [];
let chunks = 0;
for (let i = 0; i < 2; i++) {
  let streamed = '';
  chunks = 0;
  const stream = await client.chat.completions.create({
    model: 'sim-llama-8b', stream: true, max_tokens: 6, messages: [{ role: 'user', content: 'hello' }],
  });
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage !== undefined) throw new Error('a usage the client did not ask for: ' + JSON.stringify(chunk));
    streamed += chunk.choices[0]?.delta?.content ?? '';
  }
  streams.push(streamed);
}
const streamed = streams[0] === streams[1] ? streams[0] : JSON.stringify(streams);
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
