package dev.transferengine.boot.test.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** An application as a user writes one: its transfer code is {@link Inbox}. */
@SpringBootApplication
public class InboxApplication {}
