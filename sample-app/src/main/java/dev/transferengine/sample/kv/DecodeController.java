package dev.transferengine.sample.kv;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Decode's HTTP API: its page pool's descriptor and the transfer sessions prefill nodes open. */
@RestController
@RequestMapping("/kv")
@ConditionalOnRole({Role.DECODE, Role.DEMO})
class DecodeController {

    private final DecodeNode decode;

    DecodeController(final DecodeNode decode) {
        this.decode = decode;
    }

    @GetMapping("/descriptor")
    KvDescriptor descriptor() {
        return decode.descriptor();
    }

    @PostMapping("/sessions")
    KvSessionGrant open(@RequestBody final KvSessionRequest request) {
        final String source = request.source();
        return source == null ? decode.open(request.pages()) : decode.openPull(request.pages(), source);
    }

    @PostMapping("/sessions/{id}/verify")
    Mono<KvReceipt> verify(@PathVariable final String id, @RequestBody final KvVerifyRequest request) {
        return decode.verify(id, request);
    }
}
