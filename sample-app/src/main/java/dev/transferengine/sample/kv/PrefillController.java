package dev.transferengine.sample.kv;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;

/** Prefill's HTTP API: {@code POST /kv/transfer?tokens=N&decode=http://host:port}. */
@RestController
@ConditionalOnRole({Role.PREFILL, Role.DEMO})
class PrefillController {

    private final PrefillNode prefill;

    PrefillController(final PrefillNode prefill) {
        this.prefill = prefill;
    }

    @PostMapping("/kv/transfer")
    Mono<KvTransferReport> transfer(@RequestParam final int tokens, @RequestParam final String decode) {
        return prefill.transfer(tokens, decode);
    }
}
