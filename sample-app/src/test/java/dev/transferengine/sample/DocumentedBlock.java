package dev.transferengine.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A fenced shell block of a Markdown page that a {@code <!-- doc-test: ID ... -->} line marks for
 * {@link DocumentedCommandsIT}.
 *
 * @param page the page, relative to the repository root
 * @param id   the marker's id
 * @param text the block's lines, as written
 */
record DocumentedBlock(String page, String id, String text) {

    private static final Pattern MARKER = Pattern.compile("^<!-- doc-test: ([a-z0-9-]+)\\b.*-->$");

    /**
     * The marked blocks of a page.
     *
     * @param repository the repository root
     * @param page       the page, relative to it
     * @return its marked blocks, in page order
     * @throws IllegalStateException if a marker is not followed by a fenced {@code sh} block
     */
    static List<DocumentedBlock> of(final Path repository, final String page) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(repository.resolve(page));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        final List<DocumentedBlock> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            final Matcher marker = MARKER.matcher(lines.get(i).strip());
            if (!marker.matches()) {
                continue;
            }
            if (i + 1 >= lines.size() || !lines.get(i + 1).strip().equals("```sh")) {
                throw new IllegalStateException(
                        page + ":" + (i + 1) + ": marker '" + marker.group(1) + "' is not followed by a ```sh block");
            }
            final StringBuilder text = new StringBuilder();
            int j = i + 2;
            while (j < lines.size() && !lines.get(j).strip().equals("```")) {
                text.append(lines.get(j)).append('\n');
                j++;
            }
            if (j == lines.size()) {
                throw new IllegalStateException(
                        page + ":" + (i + 2) + ": the block of '" + marker.group(1) + "' never ends");
            }
            blocks.add(new DocumentedBlock(page, marker.group(1), text.toString()));
            i = j;
        }
        return blocks;
    }

    /**
     * The block's commands: continuation lines ({@code \} at the end) joined, comments and blank lines left out.
     *
     * @return one entry per command line
     */
    List<String> commands() {
        final List<String> commands = new ArrayList<>();
        final StringBuilder current = new StringBuilder();
        for (final String line : text.split("\n", -1)) {
            final String stripped = line.strip();
            if (current.isEmpty() && (stripped.isEmpty() || stripped.startsWith("#"))) {
                continue;
            }
            if (stripped.endsWith("\\")) {
                current.append(stripped, 0, stripped.length() - 1);
                continue;
            }
            current.append(stripped);
            commands.add(current.toString().strip());
            current.setLength(0);
        }
        if (!current.isEmpty()) {
            throw new IllegalStateException(page + " '" + id + "': the last line continues with '\\'");
        }
        return commands;
    }
}
