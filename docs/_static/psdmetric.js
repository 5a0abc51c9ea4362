document.addEventListener("DOMContentLoaded", () => {
  // Every figure in the text links to its full-size file, so a figure shrunk to fit the
  // column (the suite's panels, say) can be opened at full resolution.
  for (const image of document.querySelectorAll(".bd-article img")) {
    if (image.closest("a")) continue;
    const link = document.createElement("a");
    link.href = image.src;
    link.className = "full-size-figure";
    link.title = "Open the figure at full size";
    image.replaceWith(link);
    link.appendChild(image);
  }
  // A short cell (a number such as "4.7% ± 1.7%") stays on one line; a wide table then
  // scrolls inside the column instead of breaking numbers over three lines.
  for (const cell of document.querySelectorAll(".bd-article td")) {
    if (cell.textContent.trim().length <= 18) cell.style.whiteSpace = "nowrap";
  }
});
