/// <reference lib="dom" />
/// <reference lib="dom.iterable" />

/** One table of the page's data (a type only: nothing of it is in the script's text). */
interface TableData {
  readonly id: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Column whose value becomes the row's CSS class (`k-<value>`), e.g. the mode or the severity. */
  readonly classColumn?: number;
}

/**
 * The review page's script, written as a function so that it is type-checked; the page embeds its
 * source text (`reviewPageClient.toString()`), and the page's Content-Security-Policy allows exactly
 * that text by its hash. It must not refer to anything outside itself.
 *
 * Tables are virtualised: only the rows in view (plus a margin) are in the DOM, so 10,000 routes filter
 * and scroll without a freeze. Every value is set as text (`textContent`, `title`), never as markup.
 */
export function reviewPageClient(): void {
  const rowHeight = 24;
  const overscan = 12;

  const dataElement = document.getElementById('review-data');
  const tables = JSON.parse(dataElement?.textContent ?? '[]') as TableData[];
  for (const table of tables) {
    const root = document.getElementById(table.id);
    if (root) mount(root, table);
  }

  function mount(root: HTMLElement, table: TableData): void {
    const input = root.querySelector<HTMLInputElement>('input[type=search]');
    const count = root.querySelector<HTMLElement>('.count');
    const head = root.querySelector<HTMLElement>('.head');
    const viewport = root.querySelector<HTMLElement>('.viewport');
    const spacer = root.querySelector<HTMLElement>('.spacer');
    if (!input || !count || !head || !viewport || !spacer) return;
    const haystacks = table.rows.map((cells) => cells.join('\u0001').toLowerCase());
    let order = table.rows.map((_, index) => index);
    let shown = order;
    let sortColumn = -1;
    let sortDirection = 1;

    table.columns.forEach((name, column) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = name;
      button.title = `sort by ${name}`;
      button.addEventListener('click', () => sortBy(column, button));
      head.append(button);
    });

    function compareCells(a: string, b: string): number {
      const na = Number(a);
      const nb = Number(b);
      if (a !== '' && b !== '' && !Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
      return a < b ? -1 : a > b ? 1 : 0;
    }

    function sortBy(column: number, button: HTMLButtonElement): void {
      sortDirection = sortColumn === column ? -sortDirection : 1;
      sortColumn = column;
      for (const other of head!.querySelectorAll('button')) other.removeAttribute('aria-sort');
      button.setAttribute('aria-sort', sortDirection === 1 ? 'ascending' : 'descending');
      order = [...order].sort((a, b) => compareCells(table.rows[a]![column] ?? '', table.rows[b]![column] ?? '') * sortDirection || a - b);
      filter();
    }

    function filter(): void {
      const terms = input!.value.toLowerCase().split(/\s+/).filter((term) => term !== '');
      shown = terms.length === 0 ? order : order.filter((index) => terms.every((term) => haystacks[index]!.includes(term)));
      spacer!.style.height = `${shown.length * rowHeight}px`;
      count!.textContent = `${shown.length} of ${table.rows.length}`;
      draw();
    }

    function draw(): void {
      const first = Math.max(0, Math.floor(viewport!.scrollTop / rowHeight) - overscan);
      const last = Math.min(shown.length, first + Math.ceil(viewport!.clientHeight / rowHeight) + 2 * overscan);
      const fragment = document.createDocumentFragment();
      for (let position = first; position < last; position++) {
        const cells = table.rows[shown[position]!]!;
        const row = document.createElement('div');
        row.className = 'r';
        if (table.classColumn !== undefined) row.classList.add(`k-${(cells[table.classColumn] ?? '').replace(/[^A-Za-z0-9]+/g, '-')}`);
        row.setAttribute('role', 'row');
        row.style.top = `${position * rowHeight}px`;
        for (const value of cells) {
          const cell = document.createElement('div');
          cell.className = 'c';
          cell.setAttribute('role', 'cell');
          cell.textContent = value;
          cell.title = value;
          row.append(cell);
        }
        fragment.append(row);
      }
      spacer!.replaceChildren(fragment);
    }

    let scheduled = false;
    viewport.addEventListener('scroll', () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        draw();
      });
    });
    input.addEventListener('input', filter);
    filter();
  }
}
