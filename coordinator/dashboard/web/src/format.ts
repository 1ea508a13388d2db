// Formatting and small DOM helpers shared by the views.
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, any> = {},
                                                          ...children: (Node | string | null | undefined)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

export function fmt(value: number, digits = 4): string {
  if (value === null || value === undefined || !isFinite(value)) return '';
  if (value !== 0 && (Math.abs(value) >= 1e6 || Math.abs(value) < 1e-3)) return value.toExponential(2);
  return Number(value.toPrecision(digits)).toString();
}

export function fmtSeconds(seconds: number): string {
  if (!isFinite(seconds) || seconds < 0) return '';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

export const STATES = ['pending', 'leased', 'running', 'succeeded', 'failed', 'preempted', 'stale', 'cancelled', 'early_stopped'];

export function stateName(state: string): string {
  return String(state).replace(/^(TRIAL|SWEEP)_STATE_/, '').toLowerCase();
}

export function timeText(stamp: string | undefined): string {
  if (!stamp || stamp.startsWith('1970')) return '';
  return stamp.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// The page state lives in the URL's hash: #/sweep/3?x=tokens&logy=1
export function hashParams(): URLSearchParams {
  const hash = location.hash || '#/';
  const q = hash.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
}

export function setHashParam(name: string, value: string | null): void {
  const hash = location.hash || '#/';
  const q = hash.indexOf('?');
  const path = q < 0 ? hash : hash.slice(0, q);
  const params = hashParams();
  if (value === null || value === '') params.delete(name); else params.set(name, value);
  const text = params.toString();
  history.replaceState(null, '', path + (text ? '?' + text : ''));
}

export function download(name: string, type: string, content: BlobPart): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = el('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function csvField(value: any): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

// A sweep's baseline selector ({"position.variant": "rope"}) as text; "none" when it has none.
export function baselineText(baseline: Record<string, unknown> | undefined): string {
  return baseline && Object.keys(baseline).length ? JSON.stringify(baseline) : 'none';
}
