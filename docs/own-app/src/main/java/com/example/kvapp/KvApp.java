package com.example.kvapp;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class KvApp {

    public static void main(String[] args) {
        SpringApplication.run(KvApp.class, args);
    }
}
