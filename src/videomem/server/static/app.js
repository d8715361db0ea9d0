// The videomem page: ask a question, watch the agent's steps stream in, see the answer's
// evidence on the video's timeline (a click on a bar seeks the player) with its frames.
// Plain browser JavaScript, no build step. Everything comes from the API: /info, /ask (SSE).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { videos: new Map(), current: null, evidence: [], candidates: [] };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

// ------------------------------------------------------------------ store and player

async function loadInfo() {
  const response = await fetch("/info");
  if (!response.ok) throw new Error(`/info: ${response.status}`);
  const info = await response.json();
  const sizes = info.memories.map((m) => `${m.name}: ${Object.entries(m.stats).map(([k, v]) => `${v} ${k}`).join(", ")}`);
  $("store-summary").textContent =
    `${info.videos.length} video(s), ${info.clips} clips, ${info.hours.toFixed(2)} h · agent ${info.agent.name} · models ${info.models}`;
  $("memories").textContent = `Memories — ${sizes.join(" · ")}. Tools: ${info.agent.tools.map((t) => t.name).join(", ")}.`;
  for (const video of info.videos) {
    state.videos.set(video.id, video);
    $("video-select").append(el("option", { value: video.id }, video.id));
    $("scope-video").append(el("option", { value: video.id }, video.id));
  }
  if (info.videos.length) showVideo(info.videos[0].id);
}

function showVideo(id) {
  return new Promise((resolve) => {
    const player = $("player");
    if (state.current === id) return resolve();
    const video = state.videos.get(id);
    state.current = id;
    $("video-select").value = id;
    $("axis-start").textContent = clock(video.t_offset);
    $("axis-end").textContent = clock(video.t_offset + video.duration);
    player.addEventListener("loadedmetadata", () => resolve(), { once: true });
    player.src = video.url;
    drawBars();
  });
}

async function seek(videoId, t) {
  await showVideo(videoId);
  const video = state.videos.get(videoId);
  $("player").currentTime = Math.max(0, t - video.t_offset);
}

function fraction(t, video) {
  return Math.min(1, Math.max(0, (t - video.t_offset) / video.duration));
}

function drawBars() {
  const timeline = $("timeline");
  timeline.querySelectorAll(".evidence-bar, .candidate-bar").forEach((bar) => bar.remove());
  const video = state.videos.get(state.current);
  if (!video) return;
  const draw = (items, cls) => {
    // One bar per time range: entries of several memories about one clip share it.
    const ranges = new Map();
    for (const e of items.filter((x) => x.video_id === video.id)) {
      const key = `${e.t_start}|${e.t_end}`;
      const range = ranges.get(key) || { ...e, lines: [] };
      range.score = Math.max(range.score, e.score);
      range.lines.push(`${e.source} ${e.score.toFixed(2)}: ${e.text}`);
      ranges.set(key, range);
    }
    for (const e of ranges.values()) {
      const left = fraction(e.t_start, video);
      const width = Math.max(fraction(e.t_end, video) - left, 0.006);
      timeline.append(el("div", {
        class: cls,
        style: `left:${(100 * left).toFixed(3)}%;width:${(100 * width).toFixed(3)}%;opacity:${0.45 + 0.55 * Math.min(1, Math.max(0, e.score))}`,
        title: `${e.span}\n${e.lines.join("\n")}`,
        dataset: { t: e.t_start, video: e.video_id },
        onclick: () => seek(e.video_id, e.t_start),
      }));
    }
  };
  draw(state.candidates, "candidate-bar");
  draw(state.evidence, "evidence-bar");
}

function movePlayhead() {
  const video = state.videos.get(state.current);
  if (!video) return;
  const t = video.t_offset + $("player").currentTime;
  $("playhead").style.left = `${(100 * fraction(t, video)).toFixed(3)}%`;
  $("clock").textContent = clock(t);
}

// ------------------------------------------------------------------ asking

function showStep(step) {
  const args = step.arguments && Object.keys(step.arguments).length ? JSON.stringify(step.arguments) : "";
  const mark = step.error ? " malformed" : step.forced ? " forced" : "";
  $("steps").append(el("li", { class: `step${mark}` },
    el("span", { class: "tool" }, step.tool),
    el("code", {}, args),
    el("div", { class: "observation" }, step.observation || ""),
    el("small", { class: "muted" }, `${step.seconds.toFixed(2)} s · ${step.tokens} tokens`)));
  if (step.evidence) {
    state.candidates.push(...step.evidence);
    drawBars();
  }
}

function showAnswer(answer) {
  $("answer").hidden = false;
  $("answer-text").textContent = answer.answer || "(no answer)";
  $("answer-meta").textContent = `${answer.evidence.length} evidence · ${answer.tokens} tokens · ${answer.seconds.toFixed(2)} s`;
  state.evidence = answer.evidence;
  state.candidates = [];
  const list = $("evidence");
  list.replaceChildren();
  for (const e of answer.evidence) {
    list.append(el("li", { class: "evidence-item" },
      el("button", { type: "button", class: "seek", onclick: () => seek(e.video_id, e.t_start) }, `▶ ${e.span}`),
      el("span", { class: "muted" }, ` ${e.video_id} · ${e.source} · ${e.score.toFixed(2)}`),
      el("div", { class: "text" }, e.text),
      el("div", { class: "thumbs" }, ...e.frame_urls.map((url) =>
        el("img", { src: url, loading: "lazy", alt: `frame of ${e.span}`, onclick: () => seek(e.video_id, e.t_start) })))));
  }
  if (!answer.evidence.length) list.append(el("li", { class: "muted" }, "No evidence was found."));
  const first = answer.evidence[0];
  if (first && first.video_id !== state.current) showVideo(first.video_id);
  else drawBars();
}

// Server-sent events over a POST: EventSource only does GET, so read the stream by hand.
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

async function ask(submit) {
  submit.preventDefault();
  const body = { question: $("question").value.trim() };
  const choices = $("choices").value.split("\n").map((c) => c.trim()).filter(Boolean);
  if (choices.length) body.choices = choices;
  if ($("until").value.trim()) body.until = $("until").value.trim();
  if ($("scope-video").value) body.video_id = $("scope-video").value;
  $("steps").replaceChildren();
  $("answer").hidden = true;
  state.evidence = [];
  state.candidates = [];
  drawBars();
  $("status").className = "";
  $("status").textContent = "Thinking…";
  $("ask-button").disabled = true;
  try {
    const response = await fetch("/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const detail = (await response.json()).detail;
      throw new Error(Array.isArray(detail) ? detail.map((d) => `${d.loc.slice(1).join(".")}: ${d.msg}`).join("; ") : detail);
    }
    for await (const { event, data } of events(response)) {
      if (event === "step") showStep(data);
      else if (event === "answer") showAnswer(data);
      else if (event === "error") throw new Error(data.detail);
    }
    $("status").textContent = "";
  } catch (error) {
    $("status").className = "error";
    $("status").textContent = error.message;
  } finally {
    $("ask-button").disabled = false;
  }
}

// ------------------------------------------------------------------ start

$("ask-form").addEventListener("submit", ask);
$("video-select").addEventListener("change", (change) => showVideo(change.target.value));
$("player").addEventListener("timeupdate", movePlayhead);
$("player").addEventListener("seeked", movePlayhead);
loadInfo().catch((error) => {
  $("store-summary").textContent = error.message;
});
